package faults

import (
	"errors"
	"strconv"
)

// Fault is a failure injected into one charge request.
type Fault uint8

// The faults, in the order of the request's life they strike. What each
// means precisely (what is claimed, stored or charged) is the fake's to
// say; the names describe when the fault strikes.
const (
	// None processes the request normally. In a script it lets one request
	// through untouched.
	None Fault = iota
	// Pre drops the connection before the server acts: nothing happens.
	Pre
	// Unavailable answers 503 before the server acts.
	Unavailable
	// Mid drops the connection while the server is acting, before any
	// money moves.
	Mid
	// Internal fails with a 500 while acting, before any money moves.
	Internal
	// Post moves the money, then drops the connection instead of answering.
	Post
)

var names = [...]string{"none", "pre", "unavailable", "mid", "internal", "post"}

// String returns the fault's lower-case name.
func (f Fault) String() string {
	if int(f) < len(names) {
		return names[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Rates are per-request probabilities of each fault. Each must be in
// [0, 1] and their sum at most 1; the rest is the chance of no fault.
type Rates struct {
	Pre, Unavailable, Mid, Internal, Post float64 // one per Fault of the same name
}

// ErrBadRates is returned by Rates.Validate.
var ErrBadRates = errors.New("faults: each rate must be in [0, 1] and their sum at most 1")

// Validate reports whether r holds usable probabilities.
func (r Rates) Validate() error {
	sum := 0.0
	for _, p := range r.list() {
		if !(p >= 0 && p <= 1) { // also refuses NaN
			return ErrBadRates
		}
		sum += p
	}
	if sum > 1 {
		return ErrBadRates
	}
	return nil
}

// Zero reports whether r injects nothing.
func (r Rates) Zero() bool { return r == Rates{} }

func (r Rates) list() [5]float64 {
	return [5]float64{r.Pre, r.Unavailable, r.Mid, r.Internal, r.Post}
}

// pick maps u, uniform in [0, 1), to a fault by cumulative probability.
func (r Rates) pick(u float64) Fault {
	acc := 0.0
	for i, p := range r.list() {
		acc += p
		if u < acc {
			return Fault(i + 1)
		}
	}
	return None
}
