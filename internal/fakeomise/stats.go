package fakeomise

import (
	"maps"
	"slices"
	"sync"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Stats counts what the server saw and did.
type Stats struct {
	// Requests counts charge requests (POST /charges) received, faulted or
	// not: the number a client's attempt count must equal.
	Requests int
	// KeysByIntent lists the distinct keys sent for each idempay intent.
	KeysByIntent map[string][]string
	// Faults counts the faults applied, by kind.
	Faults map[fakes.Fault]int
	// Statuses counts the answers sent to charge requests, by status.
	Statuses map[int]int
	// ErrorCodes counts the error codes answered to charge requests.
	ErrorCodes map[string]int
	// Retrievals and Lists count GET /charges/{id} and GET /charges.
	Retrievals, Lists int
	// Answered records the intents that got at least one charge answer.
	Answered map[string]bool
}

type counters struct {
	mu sync.Mutex
	s  Stats
}

func newCounters() *counters {
	return &counters{s: Stats{KeysByIntent: map[string][]string{}, Faults: map[fakes.Fault]int{},
		Statuses: map[int]int{}, ErrorCodes: map[string]int{}, Answered: map[string]bool{}}}
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

func (c *counters) answered(intent string, status int, code string) {
	c.update(func(s *Stats) {
		s.Statuses[status]++
		if code != "" {
			s.ErrorCodes[code]++
		}
		if intent != "" {
			s.Answered[intent] = true
		}
	})
}

func (c *counters) retrieval() { c.update(func(s *Stats) { s.Retrievals++ }) }
func (c *counters) list()      { c.update(func(s *Stats) { s.Lists++ }) }

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Faults = maps.Clone(c.s.Faults)
	s.Statuses = maps.Clone(c.s.Statuses)
	s.ErrorCodes = maps.Clone(c.s.ErrorCodes)
	s.Answered = maps.Clone(c.s.Answered)
	s.KeysByIntent = make(map[string][]string, len(c.s.KeysByIntent))
	for k, v := range c.s.KeysByIntent {
		s.KeysByIntent[k] = slices.Clone(v)
	}
	return s
}
