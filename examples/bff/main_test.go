package main

import "testing"

// Rule: whatever the faults between frontend, BFF and provider, every
// checkout ends with a final answer and exactly one charge.
func TestOneChargePerCheckoutAcrossSeeds(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		if err := run(8, seed); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}
