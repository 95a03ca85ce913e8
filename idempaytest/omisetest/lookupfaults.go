package omisetest

import (
	"errors"
	"math/rand/v2"
	"sync"
)

// lookupFaults decides which lookups fail, from a seeded source.
type lookupFaults struct {
	mu   sync.Mutex
	rng  *rand.Rand // guarded by mu
	rate float64
}

func newLookupFaults(rate float64, seed uint64) *lookupFaults {
	// A stream of its own, so that lookups do not shift the charge faults.
	return &lookupFaults{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)), rate: rate}
}

func (l *lookupFaults) set(rate float64) error {
	if !(rate >= 0 && rate <= 1) {
		return errors.New("omisetest: lookup failure rate outside [0, 1]")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rate = rate
	return nil
}

func (l *lookupFaults) fail() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate > 0 && l.rng.Float64() < l.rate
}
