package refserver

import (
	"github.com/idempay/idempay/idempaytest/fakes"
)

// Fault is a failure the server injects into one charge request. It is
// the Fault the fake providers share (internal/faults); what each one
// does in this server is said below and in README.md.
type Fault = fakes.Fault

// The faults, in the order of the request's life they strike.
const (
	// NoFault processes the request normally. In a script it lets one
	// request through untouched.
	NoFault = fakes.None
	// Pre closes the connection before the handler's logic runs:
	// nothing is claimed, nothing is charged.
	Pre = fakes.Pre
	// Unavailable answers 503 with Retry-After before claiming anything.
	Unavailable = fakes.Unavailable
	// Mid claims the key, then closes the connection without charging and
	// without releasing the claim, which blocks the key until its lease
	// expires.
	Mid = fakes.Mid
	// Internal claims the key, then fails with a 500 before charging.
	Internal = fakes.Internal
	// Post charges and stores the response (or finds a stored one to
	// replay), then closes the connection instead of answering.
	Post = fakes.Post
)

// FaultRates are per-request probabilities of each fault. Each must be in
// [0, 1] and their sum at most 1; the remainder is the chance of no fault.
type FaultRates = fakes.Rates
