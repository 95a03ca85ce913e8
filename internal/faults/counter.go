package faults

import (
	"maps"
	"slices"
	"sync"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Counter accumulates the fakes.Traffic of one kind of request. It is safe
// for concurrent use; make one with NewCounter.
type Counter struct {
	mu sync.Mutex
	t  fakes.Traffic
}

// NewCounter returns a counter at zero.
func NewCounter() *Counter {
	return &Counter{t: fakes.Traffic{ByKey: map[string]int{}, ByID: map[string]int{}, Keys: map[string][]string{},
		Faults: map[fakes.Fault]int{}, Statuses: map[int]int{}, Codes: map[string]int{}, LastReplayed: map[string]bool{}}}
}

// Update runs f on the counts under the counter's lock.
func (c *Counter) Update(f func(*fakes.Traffic)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.t)
}

// Arrive counts one request carrying key (may be empty) for id, an intent
// or an operation ID (may be empty).
func (c *Counter) Arrive(key, id string) {
	c.Update(func(t *fakes.Traffic) {
		t.Requests++
		if key != "" {
			t.ByKey[key]++
		}
		if id == "" {
			return
		}
		t.ByID[id]++
		if key != "" && !slices.Contains(t.Keys[id], key) {
			t.Keys[id] = append(t.Keys[id], key)
		}
	})
}

// Fault counts a fault that struck.
func (c *Counter) Fault(f fakes.Fault) { c.Update(func(t *fakes.Traffic) { t.Faults[f]++ }) }

// Answered counts an answer actually written for id: its status, its error
// code if any, whether it was marked as a replay.
func (c *Counter) Answered(id string, status int, code string, replayed bool) {
	c.Update(func(t *fakes.Traffic) {
		t.Statuses[status]++
		if code != "" {
			t.Codes[code]++
		}
		if replayed {
			t.Replays++
		}
		if id != "" {
			t.LastReplayed[id] = replayed
		}
	})
}

// Snapshot returns a deep copy of the counts, which the caller may keep.
func (c *Counter) Snapshot() fakes.Traffic {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	t.ByKey, t.ByID, t.Statuses = maps.Clone(c.t.ByKey), maps.Clone(c.t.ByID), maps.Clone(c.t.Statuses)
	t.Faults, t.Codes, t.LastReplayed = maps.Clone(c.t.Faults), maps.Clone(c.t.Codes), maps.Clone(c.t.LastReplayed)
	t.Keys = make(map[string][]string, len(c.t.Keys))
	for id, keys := range c.t.Keys {
		t.Keys[id] = slices.Clone(keys)
	}
	return t
}
