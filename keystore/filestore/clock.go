package filestore

import "time"

// storeClock returns the clock of a Store opened without WithClock: the
// wall clock read once at Open, but never earlier than last (the latest
// instant in the file), advanced by the process's monotonic clock from
// then on. A step of the wall clock while the process runs (an NTP
// correction, an operator) then moves no lease or age, and a wall clock
// set back across a restart cannot make new instants precede those already
// written: a lease never lasts longer than it was granted for, and an age
// read from the store never shrinks.
func storeClock(last time.Time) func() time.Time {
	base := time.Now()
	shift := max(last.Sub(base), 0)
	return func() time.Time { return base.Add(time.Since(base) + shift) }
}

// now reads the store's clock, in UTC at the microsecond precision that
// every store keeps.
func (s *Store) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}
