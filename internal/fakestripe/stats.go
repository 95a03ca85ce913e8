package fakestripe

import (
	"maps"
	"slices"
	"sync"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Stats counts what the server saw and did.
type Stats struct {
	// Requests counts charge requests (POST /v1/payment_intents) received,
	// faulted or not: the number a client's attempt count must equal.
	Requests int
	// KeysByIntent lists the distinct keys sent for each idempay intent, in
	// the order first seen. A client keeping one key per intent shows one.
	KeysByIntent map[string][]string
	// Replays counts replayed answers actually sent.
	Replays int
	// Faults counts the faults applied, by kind.
	Faults map[fakes.Fault]int
	// Statuses counts the answers sent to charge requests, by status.
	Statuses map[int]int
	// Retrievals and Searches count lookups by ID and by search.
	Retrievals, Searches int
	// LastReplayed records, per intent, whether the last charge answer
	// actually sent carried Idempotent-Replayed.
	LastReplayed map[string]bool
}

type counters struct {
	mu sync.Mutex
	s  Stats
}

func newCounters() *counters {
	return &counters{s: Stats{KeysByIntent: map[string][]string{}, Faults: map[fakes.Fault]int{},
		Statuses: map[int]int{}, LastReplayed: map[string]bool{}}}
}

func (c *counters) update(f func(*Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.s)
}

func (c *counters) arrive(key, intent string) {
	c.update(func(s *Stats) {
		s.Requests++
		if key != "" && intent != "" && !slices.Contains(s.KeysByIntent[intent], key) {
			s.KeysByIntent[intent] = append(s.KeysByIntent[intent], key)
		}
	})
}

func (c *counters) fault(f fakes.Fault) { c.update(func(s *Stats) { s.Faults[f]++ }) }

// answered counts a charge answer that was actually written.
func (c *counters) answered(intent string, status int, replayed bool) {
	c.update(func(s *Stats) {
		s.Statuses[status]++
		if replayed {
			s.Replays++
		}
		if intent != "" {
			s.LastReplayed[intent] = replayed
		}
	})
}

func (c *counters) retrieval() { c.update(func(s *Stats) { s.Retrievals++ }) }
func (c *counters) search()    { c.update(func(s *Stats) { s.Searches++ }) }

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Faults = maps.Clone(c.s.Faults)
	s.Statuses = maps.Clone(c.s.Statuses)
	s.LastReplayed = maps.Clone(c.s.LastReplayed)
	s.KeysByIntent = make(map[string][]string, len(c.s.KeysByIntent))
	for k, v := range c.s.KeysByIntent {
		s.KeysByIntent[k] = slices.Clone(v)
	}
	return s
}
