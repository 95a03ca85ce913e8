package filestore

import "github.com/idempay/idempay/internal/hostclock"

// The simulator's way to the store's clock on a host it controls; see
// package internal/hostclock. Outside this module it cannot be reached.
func init() {
	hostclock.FileStore = func(h hostclock.Host) any {
		return Option(func(c *config) error {
			if h.Wall == nil || h.Elapsed == nil {
				return errOption("hostclock", "wall clock or elapsed counter is nil")
			}
			c.now, c.src = nil, clockSource{wall: h.Wall, elapsed: h.Elapsed}
			return nil
		})
	}
}
