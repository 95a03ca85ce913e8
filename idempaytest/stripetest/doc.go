// Package stripetest is a fake of Stripe's API for tests, in the shape of
// net/http/httptest: NewServer starts it on a loopback port, URL and
// Client point an idempay.Client (with provider/stripe) at it, Close stops
// it. Unlike stripe-mock, which validates requests and keeps no state, it
// keeps what Stripe keeps (PaymentIntents, refunds, idempotency keys), so
// that retries, replays, lookups and Settle behave as against Stripe.
//
//	srv := stripetest.NewServer(stripetest.WithTest(t)) // CheckMoney when t ends
//	client, _ := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(),
//		Credentials: "sk_test_x", Store: memstore.New(), Provider: stripe.Provider{}})
//	srv.Fail("order-1", fakes.Post) // Stripe charges; the answer is lost
//
// idempaytest/clients.Stripe does the wiring, with FastRetry.
//
// It serves /v1/payment_intents (create, retrieve, search, capture,
// cancel) and /v1/refunds (create, list, retrieve), form-encoded with
// Bearer authentication, and keeps idempotency keys as Stripe does: bound
// to their first request's parameters, 409 while one runs, results stored
// and replayed with Idempotent-Replayed, forgotten after a day. A
// Stripe-Account header acts on a connected account of its own.
//
// The payment method decides a charge's outcome: one containing "decline"
// is declined (402), "3ds" needs 3-D Secure (finished by Complete),
// "processing" stays processing; any other succeeds, or waits for capture
// when capture_method is manual.
//
// Faults, scripted (Fail, FailKey, FailNext) or random (WithFaultRates),
// strike every POST; lookups are never faulted. Ledger records every
// charge, refund, capture and cancel, and CheckMoney proves none was made
// twice or beyond the charge.
//
// It imports no adapter: a second implementation of the wire checks the
// adapter rather than agreeing with it by construction. Every status,
// code and object it answers is in README.md in this directory.
package stripetest
