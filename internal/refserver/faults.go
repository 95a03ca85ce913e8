package refserver

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
)

// Fault is a failure the server injects into one charge request.
type Fault uint8

// The faults, in the order of the request's life they strike.
const (
	// NoFault processes the request normally. In a script it lets one
	// request through untouched.
	NoFault Fault = iota
	// Pre closes the connection before the handler's logic runs:
	// nothing is claimed, nothing is charged.
	Pre
	// Unavailable answers 503 with Retry-After before claiming anything.
	Unavailable
	// Mid claims the key, then closes the connection without charging and
	// without releasing the claim, which blocks the key until its lease
	// expires.
	Mid
	// Internal claims the key, then fails with a 500 before charging.
	Internal
	// Post charges and stores the response (or finds a stored one to
	// replay), then closes the connection instead of answering.
	Post
)

var faultNames = [...]string{"none", "pre", "unavailable", "mid", "internal", "post"}

// String returns the fault's lower-case name.
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// FaultRates are per-request probabilities of each fault. Each must be in
// [0, 1] and their sum at most 1; the remainder is the chance of no fault.
type FaultRates struct {
	Pre, Unavailable, Mid, Internal, Post float64
}

// Validate reports whether r holds usable probabilities.
func (r FaultRates) Validate() error {
	sum := 0.0
	for _, p := range r.list() {
		if !(p >= 0 && p <= 1) { // also refuses NaN
			return errors.New("refserver: fault rate outside [0, 1]")
		}
		sum += p
	}
	if sum > 1 {
		return errors.New("refserver: fault rates sum to more than 1")
	}
	return nil
}

func (r FaultRates) list() [5]float64 {
	return [5]float64{r.Pre, r.Unavailable, r.Mid, r.Internal, r.Post}
}

func (r FaultRates) zero() bool { return r == FaultRates{} }

// pick maps u, uniform in [0, 1), to a fault by cumulative probability.
func (r FaultRates) pick(u float64) Fault {
	acc := 0.0
	for i, p := range r.list() {
		acc += p
		if u < acc {
			return Fault(i + 1)
		}
	}
	return NoFault
}

// injector decides the fault of each request: a scripted one if any is
// queued for its key, its order or the next request (in that order of
// precedence), otherwise one drawn at random.
type injector struct {
	mu      sync.Mutex
	rng     *rand.Rand // not goroutine-safe: guarded by mu
	rates   FaultRates
	byKey   map[string][]Fault
	byOrder map[string][]Fault
	next    []Fault
}

func newInjector(rates FaultRates, seed uint64) *injector {
	return &injector{
		// The second PCG word only has to differ from the first; any
		// constant gives a distinct stream per seed.
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rates:   rates,
		byKey:   map[string][]Fault{},
		byOrder: map[string][]Fault{},
	}
}

func (in *injector) setRates(r FaultRates) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rates = r
}

func (in *injector) scriptKey(key string, faults []Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.byKey[key] = append(in.byKey[key], faults...)
}

func (in *injector) scriptOrder(orderID string, faults []Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.byOrder[orderID] = append(in.byOrder[orderID], faults...)
}

func (in *injector) scriptNext(faults []Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.next = append(in.next, faults...)
}

// draw consumes the fault for one request. A scripted fault is consumed
// even if it turns out not to apply (Mid on a replay, say), so that a
// script always describes consecutive requests.
func (in *injector) draw(key, orderID string) Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f, ok := shift(in.byKey, key); ok {
		return f
	}
	if f, ok := shift(in.byOrder, orderID); ok {
		return f
	}
	if len(in.next) > 0 {
		f := in.next[0]
		in.next = in.next[1:]
		return f
	}
	if in.rates.zero() {
		return NoFault
	}
	return in.rates.pick(in.rng.Float64())
}

func shift(queues map[string][]Fault, id string) (Fault, bool) {
	q := queues[id]
	if id == "" || len(q) == 0 {
		return NoFault, false
	}
	if len(q) == 1 {
		delete(queues, id)
	} else {
		queues[id] = q[1:]
	}
	return q[0], true
}
