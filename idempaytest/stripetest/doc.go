// Package stripetest is a fake of Stripe's API for tests, in the shape of
// net/http/httptest: NewServer starts it on a loopback port, URL and
// Client point an idempay.Client (with provider/stripe) at it, Close stops
// it. Unlike stripe-mock, which validates requests and keeps no state, it
// keeps what Stripe keeps: PaymentIntents, refunds, idempotency keys, so
// that retries, replays, lookups and Settle behave as against Stripe.
//
//	srv := stripetest.NewServer(stripetest.WithTest(t)) // CheckMoney when t ends
//	client, _ := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(),
//		Credentials: "sk_test_x", Store: memstore.New(), Provider: stripe.Provider{}})
//	srv.Fail("order-1", fakes.Post) // Stripe charges; the answer is lost
//
// It lives under idempaytest, beside the other fakes (omisetest,
// twoc2ptest, and idempaytest.NewServer for a merchant's own API) and the
// vocabulary they share (idempaytest/fakes), rather than next to the
// adapter: it imports no adapter, so it is a second implementation of the
// wire that checks the adapter rather than agreeing with it by
// construction, and no test of provider/stripe, in or out of the package,
// can make an import cycle with it; a test that uses only Stripe compiles
// only this package, idempaytest/fakes and the engine they share.
//
// # Endpoints
//
// Form-encoded POSTs with Authorization: Bearer (WithAPIKey to require one
// secret; otherwise each secret is its own account) and the Idempotency-Key
// header; JSON answers with Request-Id, the key echoed, Stripe-Version
// echoed.
//
//	POST /v1/payment_intents                 create (and confirm) a PaymentIntent
//	GET  /v1/payment_intents/{id}            retrieve one
//	GET  /v1/payment_intents/search?query=   search by metadata['key']:'value'
//	POST /v1/payment_intents/{id}/capture    amount_to_capture, metadata[...]
//	POST /v1/payment_intents/{id}/cancel     cancellation_reason
//	POST /v1/refunds                         payment_intent (or charge), amount, reason, metadata[...]
//	GET  /v1/refunds?payment_intent=         list, newest first (limit, starting_after)
//	GET  /v1/refunds/{id}                    retrieve one
//
// # Idempotency, as Stripe keeps it
//
// Every POST, operations included: a key is bound to the parameters of its
// first request (another body under it: 400 idempotency_error); while a
// request with it runs, others get 409 invalid_request_error with code
// idempotency_key_in_use (as a recorded answer of Stripe's shows), and the
// claim carries a lease (fakes.Settings.Lease) so that a request that crashed frees
// the key; once execution starts the result is stored, 500s and business
// refusals included, and every later request with the key gets it again
// with Idempotent-Replayed: true. Requests refused by authentication or
// parameter validation are not stored. Keys are forgotten after
// fakes.Settings.Retention (24 hours): a key resent later executes again, which is
// why idempay never resends an old key. Search is eventually consistent
// (WithSearchDelay); listing refunds is not.
//
// # Stripe Connect
//
// A request with a Stripe-Account header acts on that connected account:
// its PaymentIntents, refunds and idempotency keys are its own, seen by no
// other account and not by the platform (404), and the books count it as a
// merchant of its own. A header that is no acct_ ID is answered 403
// account_invalid. RequestInfo.Account and Stats.ByAccount record the
// header.
//
// # Outcomes of a charge
//
// The payment method decides: one containing "decline" (any case) is
// declined with 402 card_error (decline_code insufficient_funds if it also
// contains "insufficient", generic_decline otherwise); "3ds" or
// "threeDSecure" needs 3-D Secure (requires_action with a redirect URL,
// finished by Server.Complete); "processing" stays processing until
// Complete; any other succeeds, or waits in requires_capture (an
// authorisation) when capture_method is manual. A PaymentIntent carries
// what Stripe's carry beside the fields idempay reads, secrets included:
// its client_secret, and for a test card alias such as pm_card_visa a new
// PaymentMethod ID rather than the alias sent.
//
// # Refunds, captures and cancels
//
// A refund answers 200 with a Refund object (status "succeeded", or
// "pending" with WithPendingRefunds until CompleteRefund) and needs a
// PaymentIntent that charged: 400 charge_not_refundable for one that did
// not (or an authorisation not captured, or cancelled); beyond what is
// left, invalid_request_error with param amount and no code, as Stripe
// answers it ("Refund amount (...) is greater than charge amount (...)",
// or "... than unrefunded amount on charge (...)" after partial refunds);
// charge_already_refunded when nothing is left.
// Without amount it refunds what is left. A capture answers the
// PaymentIntent, succeeded with amount_received the amount captured (the
// rest of the hold released), and needs requires_capture (400
// payment_intent_unexpected_state otherwise, amount_too_large beyond the
// authorisation); a cancel answers it canceled, from requires_capture or
// any status that has not charged. Refunds and captures are tagged with
// metadata[idempay_op] (fakes.OpMetadataKey), which Fail scripts and the books
// check; a cancel carries no metadata and is scripted by its
// PaymentIntent's ID.
//
// # Faults
//
// Scripted (Fail, FailKey, FailNext) or random (WithFaultRates), they
// strike every POST: Pre drops the connection before anything; Unavailable
// answers 503 before anything; Mid claims the key and drops the connection
// without acting, leaving the claim to its lease; Internal claims the key
// and stores a 500; Post acts (charges, refunds, captures), stores the
// answer and drops the connection instead of sending it. Lookups are never
// faulted.
//
// # The books
//
// Ledger records each succeeded or authorised PaymentIntent and each
// refund, capture and cancel, in the same step as the answer stored;
// CheckMoney proves none was made twice or beyond the charge (see
// idempaytest/fakes). fakes.Settings.Lenient makes the fake carry out what Stripe
// refuses, to see the check catch it.
package stripetest
