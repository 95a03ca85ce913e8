package sim

import (
	"sync"
	"time"
)

// epoch is where every seed's virtual time starts. A fixed instant keeps
// traces alike from run to run.
var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// simClock is true time in a simulated world: the providers and the stores
// read it, and each client instance reads it plus its own skew. It moves
// only when the simulator says so, because retries sleep in real time
// (go-retryablehttp) and a charge that should take a day must take
// milliseconds.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func newSimClock() *simClock { return &simClock{now: epoch} }

// Now returns the virtual time.
func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves virtual time forward by d.
func (c *simClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Elapsed is how far virtual time has moved since the epoch, for traces.
func (c *simClock) Elapsed() time.Duration { return c.Now().Sub(epoch) }

// skewed returns the clock of an instance whose host runs skew ahead of
// true time (behind, for a negative skew).
func (c *simClock) skewed(skew time.Duration) func() time.Time {
	return func() time.Time { return c.Now().Add(skew) }
}
