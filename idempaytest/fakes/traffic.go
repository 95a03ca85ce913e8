package fakes

// Traffic counts what a fake saw of one kind of request (charges, or
// refunds, captures and cancels) and what it answered. Keys are counted
// across accounts. A fake's Stats returns copies: a test may keep and
// change them.
type Traffic struct {
	// Requests counts the requests received, faulted or not: the number a
	// client's own attempt count must equal.
	Requests int
	// ByKey counts requests per idempotency key (requests without one are
	// not counted here).
	ByKey map[string]int
	// ByID counts requests per intent (for charges) or per operation ID
	// (for refunds, captures and cancels), where the request names one.
	ByID map[string]int
	// Keys lists the distinct idempotency keys sent for each intent or
	// operation ID, in the order first seen: a client that keeps one key
	// per attempt shows one per attempt, however many retries it made.
	Keys map[string][]string
	// Faults counts the faults that struck, by kind. A scripted fault that
	// could not apply (Mid on a replay) is counted where the fake says so.
	Faults map[Fault]int
	// Statuses counts the answers sent, by HTTP status. A dropped
	// connection sends none.
	Statuses map[int]int
	// Codes counts the error codes answered (the provider's "code" or
	// respCode), for answers that carry one.
	Codes map[string]int
	// Replays counts the answers sent marked as replays.
	Replays int
	// LastReplayed records, for each intent or operation ID that got an
	// answer, whether the last answer sent was marked as a replay. A
	// provider with no replay mark records false.
	LastReplayed map[string]bool
}
