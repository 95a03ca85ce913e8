package faults

import (
	"math/rand/v2"
	"sync"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Injector decides the fault of each request: a scripted one if any is
// queued for its key, its intent (or operation ID) or the next request (in
// that order of precedence), otherwise one drawn at random from a seeded source, so that
// the same seed and the same order of requests give the same faults. It is
// safe for concurrent use.
type Injector struct {
	mu       sync.Mutex
	rng      *rand.Rand // not goroutine-safe: guarded by mu
	rates    fakes.Rates
	byKey    map[string][]fakes.Fault
	byIntent map[string][]fakes.Fault
	next     []fakes.Fault
}

// NewInjector returns an injector drawing with rates from a source seeded
// with seed. It panics on invalid rates: a fixture built wrong should stop
// the test at once.
func NewInjector(rates fakes.Rates, seed uint64) *Injector {
	if err := rates.Validate(); err != nil {
		panic(err)
	}
	return &Injector{
		// The second PCG word only has to differ from the first.
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rates:    rates,
		byKey:    map[string][]fakes.Fault{},
		byIntent: map[string][]fakes.Fault{},
	}
}

// SetRates replaces the random rates, for example to let a chaos test
// settle with faults off. Scripts are not affected.
func (in *Injector) SetRates(r fakes.Rates) error {
	if err := r.Validate(); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rates = r
	return nil
}

// ScriptKey queues faults for the next requests carrying key, one per
// request (None lets one through).
func (in *Injector) ScriptKey(key string, faults ...fakes.Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.byKey[key] = append(in.byKey[key], faults...)
}

// ScriptIntent queues faults for the next requests of an intent (or of an
// operation ID), for tests that know it but not the key the client chose.
func (in *Injector) ScriptIntent(intent string, faults ...fakes.Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.byIntent[intent] = append(in.byIntent[intent], faults...)
}

// ScriptNext queues faults for the next requests, whatever they carry.
func (in *Injector) ScriptNext(faults ...fakes.Fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.next = append(in.next, faults...)
}

// Draw consumes the fault of one request carrying key for ids (an intent,
// an operation ID, in order of precedence). A scripted fault is consumed
// even if the fake finds it does not apply (Mid on a replay, say), so
// that a script always describes consecutive requests.
func (in *Injector) Draw(key string, ids ...string) fakes.Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f, ok := shift(in.byKey, key); ok {
		return f
	}
	for _, id := range ids {
		if f, ok := shift(in.byIntent, id); ok {
			return f
		}
	}
	if len(in.next) > 0 {
		f := in.next[0]
		in.next = in.next[1:]
		return f
	}
	if in.rates.Zero() {
		return fakes.None
	}
	return in.rates.Pick(in.rng.Float64())
}

func shift(queues map[string][]fakes.Fault, id string) (fakes.Fault, bool) {
	q := queues[id]
	if id == "" || len(q) == 0 {
		return fakes.None, false
	}
	if len(q) == 1 {
		delete(queues, id)
	} else {
		queues[id] = q[1:]
	}
	return q[0], true
}
