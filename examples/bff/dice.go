package main

import (
	"math/rand/v2"
	"sync"
)

// dice decides faults from a seeded generator, one roll per place a fault
// may strike, and counts the faults it caused by name.
type dice struct {
	rate float64 // chance of each named fault per roll

	mu     sync.Mutex
	rng    *rand.Rand
	struck map[string]int
}

func newDice(seed uint64, rate float64) *dice {
	return &dice{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), struck: map[string]int{}}
}

// roll returns 1 + the index of the fault that strikes, or 0 for none.
func (d *dice) roll(faults ...string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.rng.Float64()
	for i, f := range faults {
		if x < d.rate*float64(i+1) {
			d.struck[f]++
			return i + 1
		}
	}
	return 0
}

// chance reports true with probability p, without counting a fault.
func (d *dice) chance(p float64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rng.Float64() < p
}

// counts returns how often each fault struck.
func (d *dice) counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.struck))
	for k, v := range d.struck {
		out[k] = v
	}
	return out
}
