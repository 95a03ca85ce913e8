// Package refserver is a reference implementation of a merchant's own
// payment API (the contract of the seed article: POST /payments/charge with
// an Idempotency-Key header), done the way the article's sample code should
// have been. The SDK's tests, chaos tests and examples charge against it to
// prove the client correct.
//
// What it gets right, and the article's code does not:
//
//   - Claiming a key is one atomic step; only the winner executes (the
//     article checks, then inserts, and never looks at whether its insert
//     won).
//   - A claim carries a lease: a handler that crashed in flight blocks the
//     key only until the lease expires, then the next request reclaims it.
//   - Charging and storing the response are one atomic step, fenced by the
//     claim's token, so a charge can never exist without its stored answer,
//     and a handler whose lease was taken over cannot charge a second time.
//   - Keys are scoped per merchant (bearer secret and Merchant-Id header).
//   - The fingerprint covers method, path and the canonical form of the JSON
//     body, not its raw bytes.
//   - Declines are final and stored; validation errors are not stored.
//
// # Faults
//
// The server injects the article's three failure modes plus overload, either
// at random (Config.Faults with a seeded source) or scripted per key, per
// order or for the next request (Server.InjectKey, InjectOrder, InjectNext):
//
//   - Pre: the connection is closed before the handler's logic runs. Nothing
//     is claimed or charged.
//   - Mid: the key is claimed, then the handler "crashes": the connection is
//     closed with no charge and the claim is left to expire with its lease
//     (requests with the key meanwhile get 409).
//   - Post: the charge is made and its response stored, then the connection
//     is closed instead of answering. A retry gets the replay.
//   - Unavailable: 503 with Retry-After, before anything is claimed.
//   - Internal: the key is claimed, then execution fails with a 500 before
//     charging. The key is released (the article's API), or the 500 is
//     stored and replayed when Config.StoreServerErrors is set (Stripe).
//
// A dropped connection surfaces at a net/http client as an error wrapping
// io.EOF ("EOF"), or syscall.ECONNRESET with Config.DropWithReset. Beware:
// net/http's Transport silently re-sends a request that carries an
// Idempotency-Key header (and a rewindable body) when a kept-alive
// connection fails before the first response byte, so on a reused
// connection a drop may never reach the caller; the server still counts
// every attempt in Stats. Set Config.CloseConnections to make every request
// use a fresh connection, so that every drop reaches the client as an error.
//
// The Ledger records every real charge; Ledger.Check reports any order that
// was charged twice, which is what the SDK must never cause.
package refserver
