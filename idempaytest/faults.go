package idempaytest

import "github.com/idempay/idempay/idempaytest/fakes"

// Fault is a failure a fake injects into one request. The values are the
// constants below; Fault's String method gives their lower-case names
// ("pre", "mid", ...). It is the one Fault of every fake (fakes.Fault), so
// one value scripts the own-API Server, the provider fakes and
// FakeCharger (IntentScript.Fault) alike.
type Fault = fakes.Fault

// The faults a Server can inject, in the order of a request's life in
// which they strike. Pre, Mid and Post all end the same way for the
// client: the connection closes before any byte of the answer, so the
// client cannot tell them apart. Only the idempotency key makes its retry
// safe, which is exactly what a test of retry code wants to exercise.
const (
	// None lets one request through untouched. In a script it spends one
	// request without a fault: Fail(id, None, Post) faults the second.
	None Fault = fakes.None
	// Pre closes the connection before the server does anything: nothing
	// is claimed and nothing is charged. A retry is charged afresh.
	Pre Fault = fakes.Pre
	// Unavailable answers 503 with Retry-After before the key is claimed.
	// Nothing is charged.
	Unavailable Fault = fakes.Unavailable
	// Mid claims the key and then "crashes": the connection closes with
	// no charge and the claim is left to expire with the server's lease
	// (see WithLease). Until then, requests with the key get 409.
	Mid Fault = fakes.Mid
	// Internal claims the key and fails with a 500 before charging. The
	// key is released, or the 500 is stored and replayed with
	// WithStoredServerErrors.
	Internal Fault = fakes.Internal
	// Post charges, stores the answer, then closes the connection instead
	// of answering: the lost answer. A retry with the same key gets the
	// stored answer with the replay header; a retry with a new key would
	// charge twice, which CheckNoDuplicates reports.
	Post Fault = fakes.Post
)

// FaultRates are the probabilities, per charge request, of each random
// fault: fields Pre, Unavailable, Mid, Internal and Post, each in [0, 1],
// summing to at most 1; the rest is the chance of no fault. Scripted
// faults (Server.Fail, Server.FailNext) take precedence over random ones.
type FaultRates = fakes.Rates
