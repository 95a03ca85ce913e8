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
	mu     sync.Mutex
	now    time.Time
	real   bool      // the real clock (see newRealClock)
	origin time.Time // where the seed's time starts
}

func newSimClock() *simClock { return &simClock{now: epoch, origin: epoch} }

// newRealClock is the clock of a world whose store keeps real time
// (PostgreSQL's now(), Redis's TIME): nothing can move the store's clock,
// so the world's clock is the real one, and a jump is a real sleep, cut
// to realJump. Those worlds play no stories of days (expiry, key
// windows: storetest and the memory and file worlds cover them), only
// of leases, crashes and concurrency.
func newRealClock() *simClock {
	now := time.Now()
	return &simClock{real: true, origin: now, now: now}
}

// realJump is the longest real sleep a jump becomes: past a real lease.
const realJump = realLease + 150*time.Millisecond

// Now returns the world's time.
func (c *simClock) Now() time.Time {
	if c.real {
		return time.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves time forward by d (a real clock sleeps, at most realJump).
func (c *simClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	if c.real {
		time.Sleep(min(d, realJump))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Elapsed is how far time has moved since the seed began, for traces.
func (c *simClock) Elapsed() time.Duration { return c.Now().Sub(c.origin) }

// skewed returns the clock of an instance whose host runs skew ahead of
// true time (behind, for a negative skew).
func (c *simClock) skewed(skew time.Duration) func() time.Time {
	return func() time.Time { return c.Now().Add(skew) }
}
