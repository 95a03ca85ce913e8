package idempay

import (
	"testing"
	"time"
)

// Rule: a Client writes down for the fleet only what the store does not
// hold yet: a step back from a later reading, or a lead grown by more than
// aheadSlack; ordinary skew between hosts is never written.
func TestStoreFloorUnsavedFacts(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var f storeFloor
	f.observe(t0.Add(30*time.Second), t0) // skew: nothing to keep
	if facts, ok := f.unsaved(); ok {
		t.Fatalf("ordinary skew kept: %+v", facts)
	}
	f.observe(t0.Add(time.Minute+22*time.Minute), t0.Add(time.Minute)) // the store leads by 22 min
	facts, ok := f.unsaved()
	if !ok || facts.Ahead < 22*time.Minute || !facts.SteppedFrom.IsZero() {
		t.Fatalf("a 22-minute lead: got %+v, %t", facts, ok)
	}
	f.merge(facts)
	f.observe(t0.Add(2*time.Minute+22*time.Minute+30*time.Second), t0.Add(2*time.Minute))
	if facts, ok := f.unsaved(); ok {
		t.Fatalf("a lead grown by 30 s written again: %+v", facts)
	}
	floor := t0.Add(3*time.Minute + 22*time.Minute + 30*time.Second)
	if !f.observe(floor.Add(-time.Hour), t0.Add(3*time.Minute)) {
		t.Fatal("an hour's step back not seen")
	}
	facts, ok = f.unsaved()
	if !ok || !facts.SteppedFrom.Equal(floor) {
		t.Fatalf("step back from %s: got %+v, %t", floor, facts, ok)
	}
	f.merge(facts)
	if facts, ok := f.unsaved(); ok {
		t.Fatalf("kept facts written again: %+v", facts)
	}
	if got := parseClockFact(steppedPrefix + floor.Format(time.RFC3339Nano)); !got.SteppedFrom.Equal(floor) {
		t.Fatalf("the step's record reads back as %+v", got)
	}
}
