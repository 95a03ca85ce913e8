package fakes

import (
	"math/rand/v2"
	"sync"
)

// Script decides the fault of each request a fake receives: a scripted one
// if any is queued for its idempotency key, for one of its IDs (an intent,
// an operation ID, an invoice: what each fake's Fail names) or for the next
// request, in that order of precedence; otherwise one drawn at random at
// the rates, from a seeded source, so that the same seed and the same
// order of requests give the same faults. The fakes embed it: their Fail,
// FailKey, FailNext and SetFaultRates are its. It is safe for concurrent
// use; make one with NewScript.
type Script struct {
	mu    sync.Mutex
	rng   *rand.Rand // not goroutine-safe: guarded by mu
	rates Rates
	byKey map[string][]Fault
	byID  map[string][]Fault
	next  []Fault
}

// NewScript returns a script drawing at rates from a source seeded with
// seed. It panics on invalid rates: a fixture built wrong should stop the
// test at once.
func NewScript(rates Rates, seed uint64) *Script {
	if err := rates.Validate(); err != nil {
		panic(err)
	}
	return &Script{
		// The second PCG word only has to differ from the first.
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rates: rates,
		byKey: map[string][]Fault{},
		byID:  map[string][]Fault{},
	}
}

// SetFaultRates replaces the random rates, for example with zero rates to
// let a chaos test settle what is still unknown. Scripts are not affected.
// It returns ErrBadRates, and changes nothing, for bad rates.
func (s *Script) SetFaultRates(r Rates) error {
	if err := r.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rates = r
	return nil
}

// Fail queues faults for the next requests for id, one per request (None
// lets one through); calls add to the queue. What id names (an intent, an
// operation ID, a PaymentIntent, an invoice) each fake's Fail doc says. A
// fault is spent by the request it was meant for even when it cannot apply
// there (Mid on a replay), so that a script describes consecutive requests.
func (s *Script) Fail(id string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[id] = append(s.byID[id], faults...)
}

// FailKey queues faults for the next requests carrying idempotency key
// key, whatever they are for. Key scripts win over Fail's.
func (s *Script) FailKey(key string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byKey[key] = append(s.byKey[key], faults...)
}

// FailNext queues faults for the next requests that have no script of
// their own, whatever they carry.
func (s *Script) FailNext(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = append(s.next, faults...)
}

// Draw consumes the fault of one request carrying key for ids, in order of
// precedence: what a fake calls as a request arrives.
func (s *Script) Draw(key string, ids ...string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := shift(s.byKey, key); ok {
		return f
	}
	for _, id := range ids {
		if f, ok := shift(s.byID, id); ok {
			return f
		}
	}
	if len(s.next) > 0 {
		f := s.next[0]
		s.next = s.next[1:]
		return f
	}
	if s.rates.Zero() {
		return None
	}
	return s.rates.Pick(s.rng.Float64())
}

func shift(queues map[string][]Fault, id string) (Fault, bool) {
	q := queues[id]
	if id == "" || len(q) == 0 {
		return None, false
	}
	if len(q) == 1 {
		delete(queues, id)
	} else {
		queues[id] = q[1:]
	}
	return q[0], true
}
