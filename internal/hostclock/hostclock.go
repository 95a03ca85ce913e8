// Package hostclock lets the simulator (internal/sim) run the file store's
// own clock, the host's wall clock read at Open and carried by an
// elapsed-time counter, on a host whose clocks it sets: a wall clock that
// is 30 days fast at one start and right at the next. It is internal so
// that this switch, which only a test needs, stays out of the file store's
// API; production stores read the real host (time.Now, CLOCK_BOOTTIME).
package hostclock

import "time"

// Host is what the file store reads of its host's time.
type Host struct {
	Wall    func() time.Time     // the wall clock, which may be wrong
	Elapsed func() time.Duration // elapsed time from any origin; never steps back
}

// FileStore returns a keystore/filestore Option (as any, so that this
// package imports nothing of the store) that runs the store's own clock on
// h. keystore/filestore sets it when it is linked in; nil before.
var FileStore func(h Host) any
