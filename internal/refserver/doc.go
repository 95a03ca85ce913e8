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
// # What a net/http client sees
//
// Pre, Mid and Post close the connection after the request has been read
// and before any response byte: Client.Do returns a *url.Error wrapping
// io.EOF, or syscall.ECONNRESET with Config.DropWithReset. The three are
// indistinguishable to the client, which is the point: only the key makes
// the retry safe. A retry then gets, respectively, a fresh 201 (nothing
// was claimed), 409 idempotency_key_in_use until the lease expires and a
// fresh 201 after, or the stored answer with the replay header.
//
// Beware: net/http's Transport silently re-sends a request that carries
// an Idempotency-Key header (and a rewindable body, as from bytes.Reader
// or strings.Reader) when a kept-alive connection fails before the first
// response byte. On a reused connection a drop may therefore never reach
// the caller, who sees the answer to the hidden retry instead (a replay
// after Post, a 409 after Mid). The server counts every attempt in Stats
// and calls OnRequest for each. Set Config.CloseConnections, or use a
// Transport with DisableKeepAlives, so that every drop reaches the client.
//
// Unavailable answers 503 {"error":{"type":"api_error","code":
// "service_unavailable"}} with Retry-After; Internal answers 500
// {"error":{"type":"api_error","code":"internal_error"}}, marked with the
// replay header when it is a stored one being replayed.
//
// GET on the charge path with ?order_id= returns the tenant's first charge
// for the order (200, the body of a 201) or 404: the settling lookup for an
// intent whose key is too old to resend. It reads the ledger, so it works
// after the key's retention, and is never faulted.
//
// The Ledger records every real charge; Ledger.Check reports any order that
// was charged twice, which is what the SDK must never cause.
//
// # Refunds, captures and cancels
//
// POST Config.RefundPath, CapturePath and CancelPath (defaults
// /payments/refund, /payments/capture, /payments/cancel) take
//
//	{"refund_id" | "capture_id" | "cancel_id", "order_id", "charge_id",
//	 "amount", "currency", "reason", "metadata"}
//
// with the charge's key semantics (one claim per key, fingerprinted,
// leased, fenced, replayed, 409 in flight, 422 for another body) and its
// faults, scripted by the operation's ID (InjectOrder("rf-1", Post)). A
// refund answers 201 {"id": "re_...", "refund_id", "order_id", "charge_id",
// "status": "succeeded", "amount", "currency"}; a capture and a cancel 200
// with status "captured" or "canceled" and the charge's ID. GET on each
// path with ?refund_id= (capture_id, cancel_id) finds the operation (200)
// or 404. A charge sent with "capture": false is an authorisation (status
// "authorized") to capture, in part or whole, or to cancel, once.
//
// The server refuses with 400, and stores under the key, what a provider
// refuses: a refund beyond what is left of the charge (or of its capture),
// of an authorisation not captured or cancelled, a second capture or a
// cancel after a capture. With Config.Lenient it carries them all out
// instead, as a buggy provider would, and OpLedger.Check proves what the
// client must never cause: an operation ID carried out twice (refunded
// twice), refunds beyond the charge, an authorisation captured twice,
// beyond its amount, both captured and cancelled.
package refserver
