package filestore

import "time"

// monotonicElapsed counts on Go's monotonic clock, which stops while the
// host is suspended on some systems: there, ages measured across a
// suspend read too young by its length.
func monotonicElapsed() func() time.Duration {
	origin := time.Now()
	return func() time.Duration { return time.Since(origin) }
}
