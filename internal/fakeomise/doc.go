// Package fakeomise is a fake of the part of Omise's (Opn Payments') API
// that idempay's Omise adapter speaks: creating a charge (POST /charges),
// retrieving one (GET /charges/{id}) and listing charges by creation time
// (GET /charges?from=&offset=&limit=&order=).
//
// It follows what Omise documents: HTTP Basic authentication with the
// secret key as user and an empty password; a decline is not an error but
// a charge answered 200 with status "failed", failure_code and
// failure_message; errors are {"object": "error", "location", "code",
// "message"}; a card token (tokn_) can be charged once, and a second charge
// with it gets 400 used_token. Whether Omise honours Idempotency-Key is not
// documented: by default the fake ignores the header, as the adapter must
// assume; Config.HonourKeys makes it de-duplicate by key (answering the
// stored charge again, without any replay header) to test that case too.
//
// The card or source decides the outcome: one containing "decline" gives a
// failed charge (failure_code insufficient_fund); "3ds" a pending charge
// with an authorize_uri, finished by Server.Complete; "fraud" a 400
// failed_fraud_check error before any charge; "missing" a 404 not_found. A
// source (src_) is single-use like a token and pending until Complete. A
// card ID (card_) with its customer, or a customer alone, can be charged
// again and again. Any other card succeeds, or stays pending and authorised
// when capture is false. The Ledger records each successful or authorised
// charge: a second entry for one idempay intent is a double charge.
//
// A charge carries what was charged as the real ones do: a card object
// (a token's new card, or the saved card charged, whose ID is the request's
// Source) or a source object (whose ID is the request's Source).
//
// Lookups can fail too (Config.LookupFailures: a 503 drawn from the seeded
// source), and new charges can be hidden from the list for a while
// (Config.ListDelay), to exercise what the adapter does when a lookup
// proves nothing.
//
// Faults (package internal/faults) strike POST /charges, seeded or
// scripted: Pre drops the connection before anything; Unavailable answers
// 503; Mid drops it while processing, before any money moves (holding the
// key until its lease ends when keys are honoured); Internal answers 500
// backend_error before any money moves; Post charges, then drops the
// connection instead of answering.
package fakeomise
