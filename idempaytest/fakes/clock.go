package fakes

import (
	"net/http"
	"sync"
	"time"
)

// Clock is a clock that moves only when told, for tests of leases,
// retention, search delays and timestamps that must not sleep. Give its Now
// method to a fake's WithClock option, to idempay.Config.Clock, to a
// store's clock option. It is safe for concurrent use. Make one with
// NewClock; the zero Clock reads the zero time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d (backwards if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// StampDate dates an answer on a fake's clock, as a real provider dates
// its answers on its own: a client that learns the provider's clock from
// the Date header (idempay does, to bound how far its store's clock reads
// ahead) learns the fake's, not the test machine's.
func StampDate(h http.Header, now time.Time) {
	h.Set("Date", now.UTC().Format(http.TimeFormat))
}
