package filestore

import (
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/idempay/idempay"
)

// Defaults of the options. DefaultMaxBatchSize and DefaultMaxBatchDelay were
// chosen with BenchmarkBatchTuning; the figures are in the package
// documentation.
const (
	// DefaultRetention is how long closed records are kept after they
	// were closed: long enough to replay a result locally for days after the
	// provider (24 hours at Stripe and Omise) has forgotten the key.
	DefaultRetention = 7 * 24 * time.Hour
	// DefaultMaxBatchSize is kept for compatibility; see
	// WithMaxBatchSize.
	DefaultMaxBatchSize = 16
	// DefaultMaxBatchDelay is how long a write that need not be durable
	// at once (a success, a renewal, a release) may wait in memory for a
	// durable write's commit to carry it before the store commits it on
	// its own. It bounds what a crash of the process can lose of those
	// writes; the loss reopens intents, which a resume settles by replay.
	DefaultMaxBatchDelay = 10 * time.Millisecond
	// DefaultFileMode is the mode of a new store file: the keys of
	// payments are for the service's user only.
	DefaultFileMode fs.FileMode = 0o600
	// DefaultOpenTimeout is how long Open waits for the file lock held
	// by another process (or another Store of this process) before it
	// gives up, rather than hanging a service start forever.
	DefaultOpenTimeout = 5 * time.Second
	// DefaultSweepInterval is how often the background sweep expires
	// closed records older than the retention window.
	DefaultSweepInterval = time.Hour
)

// An Option configures Open. Options check their argument and make Open
// fail with an *idempay.ConfigError (matching idempay.ErrConfig)
// rather than run with a value that cannot work.
type Option func(*config) error

// config holds the settings of a Store.
type config struct {
	retention     time.Duration
	maxBatchSize  int
	maxBatchDelay time.Duration
	fileMode      fs.FileMode
	openTimeout   time.Duration
	sweepInterval time.Duration
	now           func() time.Time // nil: storeClock
	src           clockSource      // storeClock's readings; zero: hostClock
	logger        *slog.Logger
	onSweep       func(deleted int, err error)
}

func defaultConfig() config {
	return config{
		retention:     DefaultRetention,
		maxBatchSize:  DefaultMaxBatchSize,
		maxBatchDelay: DefaultMaxBatchDelay,
		fileMode:      DefaultFileMode,
		openTimeout:   DefaultOpenTimeout,
		sweepInterval: DefaultSweepInterval,
		logger:        slog.Default(),
	}
}

// errOption prefixes the errors of options, so that a failed Open says
// which option was wrong.
func errOption(name string, format string, args ...any) error {
	return &idempay.ConfigError{Field: "filestore." + name, Reason: fmt.Sprintf(format, args...)}
}

// WithRetention sets how long succeeded and failed records are kept after
// their ClosedAt before the sweep deletes them (default DefaultRetention).
// Open and pending records are never deleted, whatever their age. d must be
// positive.
func WithRetention(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return errOption("WithRetention", "retention %v is not positive", d)
		}
		c.retention = d
		return nil
	}
}

// WithMaxBatchSize is kept for compatibility and has no effect: a commit
// takes every write waiting for it, however many, and a durable write never
// waits for others (see README.md). n must be at least 1.
//
// Deprecated: commits are shared without a batch to fill.
func WithMaxBatchSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return errOption("WithMaxBatchSize", "size %d is less than 1", n)
		}
		c.maxBatchSize = n
		return nil
	}
}

// WithMaxBatchDelay sets how long a write that need not be durable at once
// (a success, a renewal, a release: see Store.Resolve and Store.Reserve)
// may wait in memory for the next durable write's commit before the store
// commits it on its own (default DefaultMaxBatchDelay). Durable writes
// never wait for it. Zero commits such writes at once; d must not be
// negative.
func WithMaxBatchDelay(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return errOption("WithMaxBatchDelay", "delay %v is negative", d)
		}
		c.maxBatchDelay = d
		return nil
	}
}

// WithFileMode sets the permission bits of the file when Open creates it
// (default DefaultFileMode). The mode must be permission bits only and let
// the owner read and write, since the store writes the file in place.
func WithFileMode(m fs.FileMode) Option {
	return func(c *config) error {
		if m&^fs.ModePerm != 0 || m&0o600 != 0o600 {
			return errOption("WithFileMode", "mode %v is not owner-readable-and-writable permission bits", m)
		}
		c.fileMode = m
		return nil
	}
}

// WithOpenTimeout sets how long Open waits for the file lock held by
// another process or Store (default DefaultOpenTimeout). Zero waits
// forever; d must not be negative.
func WithOpenTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return errOption("WithOpenTimeout", "timeout %v is negative", d)
		}
		c.openTimeout = d
		return nil
	}
}

// WithSweepInterval sets how often the background sweep runs (default
// DefaultSweepInterval); the first sweep runs as soon as Open returns. Zero
// turns the sweep off, leaving Expire to the caller; d must not be negative.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return errOption("WithSweepInterval", "interval %v is negative", d)
		}
		c.sweepInterval = d
		return nil
	}
}

// WithClock makes the store read now instead of its own clock: every
// instant it stamps in a record (CreatedAt, UpdatedAt, ClosedAt,
// LeaseUntil), Reservation.Now, and the cutoffs of Expire and the sweep.
// Tests and the fault simulator move it by hand. The store takes it for the
// truth: it neither restamps a file ahead of it nor leaves downtimes out of
// Expire. The default is the host's clock, as README.md
// describes under "The store's clock".
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errOption("WithClock", "clock is nil")
		}
		c.now = now
		return nil
	}
}

// WithSweepReport sets a function called after each background sweep with
// the number of records it deleted and its error, for logs and metrics. It
// is called from the sweep's goroutine and must not call Close.
func WithSweepReport(f func(deleted int, err error)) Option {
	return func(c *config) error {
		if f == nil {
			return errOption("WithSweepReport", "function is nil")
		}
		c.onSweep = f
		return nil
	}
}

// WithLogger sets where the store logs what an operator must know: at
// warn level, a jump of the host's clock (see ClockJumps); at info level,
// a downtime. The default is slog.Default(); nil logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}
