package fakes

import (
	"errors"
	"strconv"
)

// Fault is a failure a fake injects into one request. See the package doc
// for when each strikes; each fake's package doc says what it does there.
type Fault uint8

// The faults, in the order of a request's life in which they strike.
const (
	// None lets a request through untouched. In a script it spends one
	// request without a fault: Fail(id, None, Post) faults the second.
	None Fault = iota
	// Pre drops the connection before the fake acts: nothing happens.
	Pre
	// Unavailable answers 503 before the fake acts: nothing happens.
	Unavailable
	// Mid drops the connection while the fake acts, before money moves.
	Mid
	// Internal fails with a 500 while the fake acts, before money moves.
	Internal
	// Post moves the money, then drops the connection instead of answering.
	Post
)

var names = [...]string{"none", "pre", "unavailable", "mid", "internal", "post"}

// String returns the fault's lower-case name ("post"), or "fault(n)" for a
// value that is none of the constants.
func (f Fault) String() string {
	if int(f) < len(names) {
		return names[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Rates are per-request probabilities of each fault. Each must be in
// [0, 1] and their sum at most 1; the rest is the chance of no fault. The
// zero value injects nothing.
type Rates struct {
	Pre, Unavailable, Mid, Internal, Post float64 // one per Fault of the same name
}

// ErrBadRates is returned by Rates.Validate, and by every constructor or
// setter given such rates.
var ErrBadRates = errors.New("fakes: each fault rate must be in [0, 1] and their sum at most 1")

// Validate returns ErrBadRates unless r holds usable probabilities.
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

// Pick maps u, a uniform draw in [0, 1), to a fault by cumulative
// probability, in the order of the constants: with Rates{Pre: .1, Post: .1}
// u below .1 is Pre, from .1 to .2 Post, the rest None. The fakes draw
// their random faults with it.
func (r Rates) Pick(u float64) Fault {
	acc := 0.0
	for i, p := range r.list() {
		acc += p
		if u < acc {
			return Fault(i + 1)
		}
	}
	return None
}
