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

// Rule: a provider outage does not burn the frontend's key: the request
// that found the provider unreachable is answered 503 (never a stored
// decline), and the frontend's retry with the same key is charged, once,
// under the key of the next attempt, and replayed after.
func TestOutageThenRetryUnderTheSameKey(t *testing.T) {
	w, err := newWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	st := outageCheckout(w.calm, w.road, w.prov, "order-outage", 1400)
	if err := st.check(); err != nil {
		t.Fatalf("%v; answers %q", err, st.answers)
	}
}
