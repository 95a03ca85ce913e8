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
// It lives under idempaytest, beside the other fakes and the vocabulary
// they share (idempaytest/fakes), for the reasons stripetest's doc gives:
// no adapter imported (a second implementation of the wire), no cycle
// possible with provider/omise's tests, only this package compiled by a
// test that uses only Omise.
//
// # Endpoints
//
// Form-encoded POSTs, HTTP Basic authentication with the secret key as
// user and an empty password (WithSecretKey to require one key; otherwise
// each user is its own account); JSON answers, errors as {"object":
// "error", "location", "code", "message"}.
//
//	POST /charges                        create a charge
//	GET  /charges/{id}                   retrieve one
//	GET  /charges?from=&to=&offset=&limit=&order=   list by creation time
//	POST /charges/{id}/refunds           amount (required), metadata[...], void
//	GET  /charges/{id}/refunds           list (offset, limit, order)
//	GET  /charges/{id}/refunds/{refund}  retrieve one
//	POST /charges/{id}/capture           capture_amount (optional: the whole authorisation)
//	POST /charges/{id}/reverse           release an authorisation
//
// # What it follows of Omise
//
// A decline is not an error but a charge answered 200 with status
// "failed", failure_code and failure_message; a card token (tokn_) can be
// charged once, and a second charge with it gets 400 used_token. Whether
// Omise honours Idempotency-Key is not documented: by default the fake
// ignores the header, as the adapter must assume, and
// WithIdempotencyKeys makes it de-duplicate every POST by key (answering
// the stored answer again, without any replay header).
//
// The card or source decides a charge's outcome: one containing "decline"
// gives a failed charge (failure_code insufficient_fund); "3ds" a pending
// charge with an authorize_uri, finished by Server.Complete; "fraud" a 400
// failed_fraud_check error before any charge; "missing" a 404 not_found. A
// source (src_) is single-use like a token and pending until Complete. A
// card ID (card_) with its customer, or a customer alone, can be charged
// again and again. Any other card succeeds, or stays pending and
// authorised when capture is false. A charge carries what was charged as
// the real ones do (a card or source object), and what can be done with it
// (capturable, reversible, refundable, refunded_amount, its refunds). A
// pre_auth charge (authorization_type pre_auth) also says what it holds and
// what its capture moved (authorized_amount, captured_amount: less than the
// amount after a partial capture); a default (final_auth) charge carries
// neither, as Omise's answers show, unless captured in part, which Omise
// documents for pre_auth only and the fake allows (then it carries both).
//
// # Refunds, captures and reverses
//
// A refund answers 200 with a refund object (status "closed", or "pending"
// with WithPendingRefunds until CompleteRefund) and needs a paid charge:
// 400 failed_refund otherwise (and past Omise's 15 refunds a charge),
// 400 invalid_amount beyond what is left. A capture answers the charge,
// successful and paid, and needs an authorisation made with capture false
// (400 failed_capture otherwise, invalid_amount beyond it); a reverse
// answers it reversed (status "reversed") and needs the same (400
// invalid_charge otherwise). An unknown charge is 404 not_found, not
// stored. Refunds are tagged with metadata[idempay_op] (fakes.OpMetadataKey),
// which Fail scripts and the books check; captures and reverses carry no
// metadata and are scripted by their charge's ID. The error codes of these
// refusals are the fake's choice among Omise's documented codes: Omise
// does not document which it answers when.
//
// # Faults
//
// Scripted (Fail, FailKey, FailNext) or random (WithFaultRates), they
// strike every POST: Pre drops the connection before anything;
// Unavailable answers 503; Mid drops it while processing, before any money
// moves (holding an honoured key until its lease ends); Internal answers
// 500 backend_error before any money moves (nothing stored); Post acts,
// then drops the connection instead of answering. Lookups fail with
// WithLookupFailures (503, from the seeded source), and new charges can be
// hidden from the list for a while (WithListDelay), to exercise what an
// adapter does when a lookup proves nothing.
//
// # The books
//
// Ledger records each successful or authorised charge the API made
// (WithNeighbors' charges, another integration's, are not in them) and
// each refund, capture and reverse, in the same step as the answer;
// CheckMoney proves none was made twice or beyond the charge (see
// idempaytest/fakes). fakes.Settings.Lenient makes the fake carry out what Omise
// refuses, to see the check catch it.
package omisetest
