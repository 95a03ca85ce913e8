// Package refserver is a reference implementation of a merchant's own
// payment API (the contract of the seed article: POST /payments/charge with
// an Idempotency-Key header), done the way the article's sample code should
// have been. The SDK's tests, chaos tests and examples charge against it,
// and idempaytest.NewServer serves it to consumers.
//
// Claiming a key is one atomic step with a lease, so a handler that
// crashed blocks the key only until the lease ends; charging and storing
// the answer are one step fenced by the claim, so a charge never exists
// without its stored answer; keys are scoped per merchant and
// fingerprinted on the canonical JSON body; declines are stored,
// validation errors are not.
//
// Faults (Pre, Mid, Post, Unavailable, Internal) are injected at random
// (Config.Faults) or scripted per key, order or next request (InjectKey,
// InjectOrder, InjectNext). Pre, Mid and Post close the connection before
// any byte of the answer, so a client cannot tell them apart: only the key
// makes its retry safe. net/http resends a keyed request on a reused
// connection that failed; set Config.CloseConnections so every drop
// reaches the client.
//
// GET on the charge path with ?order_id= looks a charge up. Refunds,
// captures and cancels (Config.RefundPath, CapturePath, CancelPath) keep
// the charge's key semantics. The Ledger and OpLedger prove that nothing
// was charged or refunded twice. The details are in README.md in this directory.
package refserver
