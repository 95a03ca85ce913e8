package filestore

import "time"

// storeClock returns the clock of a Store opened without WithClock: the
// wall clock read once at Open, advanced by the process's monotonic clock
// from then on. A step of the wall clock while the process runs (an NTP
// correction, an operator) then moves no lease or age: a lease never runs
// out early under its holder, nor lasts longer than it was granted for.
func storeClock() func() time.Time {
	base := time.Now()
	return func() time.Time { return base.Add(time.Since(base)) }
}

// now reads the store's clock, in UTC at the microsecond precision that
// every store keeps.
func (s *Store) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}
