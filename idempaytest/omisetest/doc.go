// Package omisetest is a fake of Omise's (Opn Payments') API for tests, in
// the shape of net/http/httptest: NewServer starts it on a loopback port,
// URL and Client point an idempay.Client (with provider/omise) at it,
// Close stops it. It keeps what Omise keeps (charges, refunds, single-use
// tokens) so that retries, lookups and Settle behave as against Omise.
//
//	srv := omisetest.NewServer(omisetest.WithTest(t)) // CheckMoney when t ends
//	client, _ := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(),
//		Credentials: "skey_test_x", Store: memstore.New(), Provider: omise.Provider{}})
//
// idempaytest/clients.Omise does the wiring, with FastRetry.
//
// It serves /charges (create, retrieve, list by time) and a charge's
// refunds, capture and reverse, form-encoded with HTTP Basic
// authentication. As Omise, a decline is a charge answered 200 with status
// "failed", and a card token can be charged once. Whether Omise honours
// Idempotency-Key is not documented, so the fake ignores it unless
// WithIdempotencyKeys.
//
// The card or source decides a charge's outcome: one containing "decline"
// fails, "3ds" is pending with an authorize_uri (finished by Complete),
// "fraud" is refused before any charge; any other succeeds, or stays
// authorised when capture is false.
//
// Faults, scripted (Fail, FailKey, FailNext) or random (WithFaultRates),
// strike every POST; lookups fail with WithLookupFailures and new charges
// hide from the list with WithListDelay. Ledger records every charge,
// refund, capture and reverse, and CheckMoney proves none was made twice
// or beyond the charge.
//
// It imports no adapter, as stripetest does not. Every status, code and
// object it answers is in README.md in this directory.
package omisetest
