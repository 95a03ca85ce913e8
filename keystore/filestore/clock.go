package filestore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ClockTolerance is how far the host's wall clock may disagree with the
// store's clock before the store reports a jump (see the package
// documentation): more than NTP ever slews, less than any retention.
const ClockTolerance = time.Minute

// clockSource is where a Store without WithClock reads time: the host's
// wall clock, and a counter of elapsed time that neither steps with the
// wall clock nor stops while the host is suspended (CLOCK_BOOTTIME on
// Linux, see elapsed_linux.go).
type clockSource struct {
	wall    func() time.Time
	elapsed func() time.Duration // from an arbitrary origin; never goes back
}

func hostClock() clockSource {
	return clockSource{wall: func() time.Time { return time.Now().Round(0) }, elapsed: hostElapsed()}
}

// storeClock is the clock of a Store opened without WithClock: base, the
// store's instant at Open, advanced by the elapsed-time counter. It never
// steps while the store is open. It watches the wall clock, and reports
// (jumps, and a warning in the log) each time the two come apart by more
// than ClockTolerance from where they last stood.
type storeClock struct {
	src    clockSource
	base   time.Time
	origin time.Duration
	logger *slog.Logger

	jumps    atomic.Int64
	mu       sync.Mutex
	reported time.Duration // wall minus store clock when last reported
}

func newStoreClock(src clockSource, base time.Time, logger *slog.Logger) *storeClock {
	c := &storeClock{src: src, base: base, origin: src.elapsed(), logger: logger}
	c.reported = src.wall().Sub(base)
	return c
}

// now reads the clock and checks it against the wall clock.
func (c *storeClock) now() time.Time {
	t := c.base.Add(c.src.elapsed() - c.origin)
	c.watch(c.src.wall().Sub(t))
	return t
}

// watch reports off, how far the wall clock is from the store's clock, if
// it moved by more than ClockTolerance since the last report.
func (c *storeClock) watch(off time.Duration) {
	c.mu.Lock()
	moved := off - c.reported
	if moved <= ClockTolerance && moved >= -ClockTolerance {
		c.mu.Unlock()
		return
	}
	c.reported = off
	c.mu.Unlock()
	c.jump("idempay file store: the host's wall clock jumped; the store keeps its own clock, which does not step",
		slog.Duration("wall_minus_store", off))
}

// jump counts a jump and logs it at warn level.
func (c *storeClock) jump(msg string, attrs ...slog.Attr) {
	c.jumps.Add(1)
	if c.logger != nil {
		c.logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
	}
}

// now reads the store's clock, in UTC at the microsecond precision that
// every store keeps.
func (s *Store) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}

// ClockJumps returns how many times the store found the host's wall clock
// off its own by more than ClockTolerance: at Open, against the latest
// instant in the file, and while open, against the store's clock. Each is
// also logged at warn level (see WithLogger). It is always zero with
// WithClock.
func (s *Store) ClockJumps() int {
	if s.host == nil {
		return 0
	}
	return int(s.host.jumps.Load())
}

// clockPlan is how Open sets the store's clock against the file.
type clockPlan struct {
	base time.Time // the store's clock at Open
	// gap is how far the host's clock is ahead of the latest instant in
	// the file: a downtime (see downtime).
	gap time.Duration
	// ahead is how far the file is ahead of the host's clock, when by
	// more than ClockTolerance: its later instants are restamped.
	ahead time.Duration
}

// planClock sets the clock of an Open at the host's wall instant, for a
// file whose latest instant is last. The host's clock is trusted: an
// earlier Open whose clock was fast cannot push this one ahead. Only a file
// ahead by less than ClockTolerance (NTP's slew, a restart within the
// second) keeps the clock at last, so that instants stay in order.
func planClock(wall, last time.Time) clockPlan {
	lead := last.Sub(wall)
	switch {
	case last.IsZero():
		return clockPlan{base: wall}
	case lead <= 0:
		return clockPlan{base: wall, gap: -lead}
	case lead <= ClockTolerance:
		return clockPlan{base: last}
	}
	return clockPlan{base: wall, ahead: lead}
}

// settle applies plan to the file in Open's write transaction: it
// restamps a file found ahead, records the downtime since the latest
// instant, and returns the downtimes Expire is to leave out.
func (c *storeClock) settle(tx *bolt.Tx, plan clockPlan, last time.Time) ([]downtime, error) {
	downs, err := readDowntimes(tx)
	if err != nil {
		return nil, err
	}
	gap := plan.gap
	if plan.ahead > 0 {
		n, floor, err := restamp(tx, plan.base)
		if err != nil {
			return nil, err
		}
		// Nothing is known of the time between floor and now: it is a
		// downtime, and so are none of the gaps the fast Open recorded
		// after floor.
		for i, d := range downs {
			if d.at.After(floor) {
				downs = downs[:i]
				break
			}
		}
		gap = plan.base.Sub(floor)
		c.jump("idempay file store: the file holds instants ahead of the host's clock; the store follows the host's clock, restamps those records so that no key reads younger and no closed record older than it can be, and leaves the gap out of Expire",
			slog.Duration("file_ahead_by", plan.ahead), slog.Time("latest_in_file", last),
			slog.Time("host_clock", plan.base), slog.Int("restamped", n))
	} else if gap > ClockTolerance {
		c.info("idempay file store: the host's clock is ahead of the latest instant in the file; Expire does not count that gap",
			slog.Duration("gap", gap), slog.Time("latest_in_file", last))
	}
	if gap > 0 {
		downs = append(downs, downtime{at: plan.base, gap: gap})
	}
	// The file's latest instant is now this Open's: one that an ahead
	// clock left in it must not make the next Open restamp again.
	if err := writeLastSeen(tx, plan.base); err != nil {
		return nil, err
	}
	return downs, writeDowntimes(tx, downs)
}

func (c *storeClock) info(msg string, attrs ...slog.Attr) {
	if c.logger != nil {
		c.logger.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
	}
}
