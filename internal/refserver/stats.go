package refserver

import (
	"maps"
	"slices"
	"sync"
)

// Stats counts what the server saw and did with charge requests. Keys and
// order IDs are counted across tenants.
type Stats struct {
	// Requests is the number of charge requests received, faulted or not.
	Requests int
	// ByKey counts charge requests per idempotency key (unquoted; only
	// keys that parsed).
	ByKey map[string]int
	// ByOrder counts charge requests per order_id (only bodies whose
	// order_id could be read).
	ByOrder map[string]int
	// KeysByOrder lists the distinct keys sent for each order_id, in the
	// order they were first seen. A client that keeps one key per intent
	// shows exactly one.
	KeysByOrder map[string][]string
	// Replays is the number of replayed responses actually sent.
	Replays int
	// Reclaims is the number of in-flight claims taken over after their
	// lease expired.
	Reclaims int
	// Faults counts the faults applied, by kind. A scripted or drawn fault
	// that did not apply (Mid on a replay, say) is not counted.
	Faults map[Fault]int
	// Statuses counts the responses sent to charge requests, by status.
	Statuses map[int]int
	// Lookups is the number of lookup requests (GET by order_id).
	Lookups int
	// Ops counts the refund, capture and cancel requests. Faults and
	// Statuses above count theirs too.
	Ops OpStats
}

// OpStats counts what the server saw of refund, capture and cancel
// requests, as Stats does of charges.
type OpStats struct {
	Requests int                 // received, faulted or not
	ByID     map[string]int      // requests per refund_id, capture_id or cancel_id
	KeysByID map[string][]string // the distinct keys sent for each operation ID
	Replays  int                 // replayed answers actually sent
	Lookups  int                 // lookup requests (GET)
}

// counters accumulates Stats under a lock.
type counters struct {
	mu sync.Mutex
	s  Stats
}

func newCounters() *counters {
	return &counters{s: Stats{
		ByKey:       map[string]int{},
		ByOrder:     map[string]int{},
		KeysByOrder: map[string][]string{},
		Faults:      map[Fault]int{},
		Statuses:    map[int]int{},
		Ops:         OpStats{ByID: map[string]int{}, KeysByID: map[string][]string{}},
	}}
}

func (c *counters) update(f func(*Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.s)
}

// arrive counts one charge request; empty key or order are not counted.
func (c *counters) arrive(key, orderID string) {
	c.update(func(s *Stats) {
		s.Requests++
		if key != "" {
			s.ByKey[key]++
		}
		if orderID == "" {
			return
		}
		s.ByOrder[orderID]++
		if key != "" && !slices.Contains(s.KeysByOrder[orderID], key) {
			s.KeysByOrder[orderID] = append(s.KeysByOrder[orderID], key)
		}
	})
}

// arriveOp counts one operation request; empty key or ID are not counted.
func (c *counters) arriveOp(key, opID string) {
	c.update(func(s *Stats) {
		s.Ops.Requests++
		if opID == "" {
			return
		}
		s.Ops.ByID[opID]++
		if key != "" && !slices.Contains(s.Ops.KeysByID[opID], key) {
			s.Ops.KeysByID[opID] = append(s.Ops.KeysByID[opID], key)
		}
	})
}

func (c *counters) opReplay() { c.update(func(s *Stats) { s.Ops.Replays++ }) }
func (c *counters) opLookup() { c.update(func(s *Stats) { s.Ops.Lookups++ }) }

func (c *counters) fault(f Fault)   { c.update(func(s *Stats) { s.Faults[f]++ }) }
func (c *counters) status(code int) { c.update(func(s *Stats) { s.Statuses[code]++ }) }
func (c *counters) replay()         { c.update(func(s *Stats) { s.Replays++ }) }
func (c *counters) reclaim()        { c.update(func(s *Stats) { s.Reclaims++ }) }
func (c *counters) lookup()         { c.update(func(s *Stats) { s.Lookups++ }) }

// snapshot returns a deep copy, which the caller may keep and modify.
func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.ByKey = maps.Clone(c.s.ByKey)
	s.ByOrder = maps.Clone(c.s.ByOrder)
	s.Faults = maps.Clone(c.s.Faults)
	s.Statuses = maps.Clone(c.s.Statuses)
	s.KeysByOrder = cloneKeys(c.s.KeysByOrder)
	s.Ops.ByID = maps.Clone(c.s.Ops.ByID)
	s.Ops.KeysByID = cloneKeys(c.s.Ops.KeysByID)
	return s
}

func cloneKeys(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for id, keys := range m {
		out[id] = slices.Clone(keys)
	}
	return out
}
