package redis

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults for the options.
const (
	DefaultPrefix      = "idempay:"
	DefaultExpireBatch = 1000
	DefaultDurableWait = 2 * time.Second
	// DefaultLossWindow is how long after a lost data set is noticed the
	// Store reports its reservations unproven (WithLossWindow): the
	// providers' key retention, 24 hours.
	DefaultLossWindow = 24 * time.Hour
)

// Option configures a Store. Options validate their input: New returns the
// error of the first invalid one.
type Option func(*config) error

type config struct {
	prefix         string
	closedTTL      time.Duration
	expireBatch    int
	durableWait    time.Duration
	durableWaitSet bool
	lossy          bool // WithLossyServer: write even where the server may lose acknowledged writes
	lossWindow     time.Duration
	logger         *slog.Logger
}

// WithPrefix sets the string every key starts with (default "idempay:"), so
// that several stores or applications can share a server. It must be
// non-empty and must not contain '{' or '}', which would change the Cluster
// hash tag the layout relies on.
func WithPrefix(p string) Option {
	return func(c *config) error {
		if p == "" || strings.ContainsAny(p, "{}") {
			return fmt.Errorf("redis: invalid key prefix %q: want non-empty, without '{' or '}'", p)
		}
		c.prefix = p
		return nil
	}
}

// WithClosedTTL makes Redis delete each settled record d after the Resolve
// that settled it (by the server's clock, like ClosedAt). Open and pending
// records never get a TTL, and a record whose failed attempt is followed by
// a new one loses its TTL again. Choose d at least as long as the
// providers' key retention (24 hours for Stripe and Omise), so a retry
// within the window is answered from the store.
//
// With a TTL, each settling Resolve also drops from the namespace's index of
// settled records the entries of records settled more than d before it,
// which Redis has deleted by then; this keeps the index bounded when Expire
// is never called. d must be at least one millisecond; zero (the default)
// means no TTL, and Expire is the only way records go. Give every Store of
// a fleet the same TTL.
func WithClosedTTL(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || (d > 0 && d < time.Millisecond) {
			return fmt.Errorf("redis: closed-record TTL %v: want zero or at least 1ms", d)
		}
		c.closedTTL = d
		return nil
	}
}

// WithExpireBatch sets how many index entries Expire handles per script call
// (default 1000), which bounds how long one call blocks the server.
func WithExpireBatch(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("redis: expire batch must be positive, got %d", n)
		}
		c.expireBatch = n
		return nil
	}
}

// WithDurableWait bounds how long a write that must be durable waits for
// the server's AOF to reach the disk (WAITAOF, Redis 7.2 on) before it
// fails with ErrNotDurable. The default is DefaultDurableWait, shortened to
// two thirds of the client's ReadTimeout when that is shorter; an explicit
// d must be shorter than the ReadTimeout, or go-redis would give up on the
// reply and send the write again. d must be at least one millisecond.
func WithDurableWait(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("redis: durable wait %v: want at least 1ms", d)
		}
		c.durableWait, c.durableWaitSet = d, true
		return nil
	}
}

// WithRequireDurability is the default: every write that must be durable
// (every Reserve, each Resolve with Resolution.Durable) fails with a
// *DurabilityError, before anything is written, while the server's settings
// cannot make it durable (see Store.Durability). Given after
// WithLossyServer, it undoes it. It is kept for the callers that asked for
// it before it was the default.
func WithRequireDurability() Option {
	return func(c *config) error {
		c.lossy = false
		return nil
	}
}

// WithLossyServer makes the Store write where the server may lose what it
// acknowledged: no persistence (a restart loses every record), an AOF
// fsynced every second on a Redis without WAITAOF (a crash loses up to a
// second of keys), an evicting maxmemory-policy, or settings CONFIG GET
// would not show. The Store then logs the problems once and writes anyway.
// A lost key is a charge the fleet may send again under a new key: this is
// for tests (the project's CI Redis runs with --save "" --appendonly no),
// or for a server whose durability the operator has checked by other means
// (a managed service that refuses CONFIG).
func WithLossyServer() Option {
	return func(c *config) error {
		c.lossy = true
		return nil
	}
}

// WithLogger sets where the Store logs, at warn level, what it cannot
// report as an error: the server's durability problems, found at the first
// write, and a closing Resolve whose namespace could not be registered for
// Expire. The default is slog.Default(); nil discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
		return nil
	}
}

// WithLossWindow sets how long after the Store notices that the server
// lost acknowledged writes (see Store.Reserve) it reports every
// reservation of the namespace as unproven (idempay.Reservation.Unproven),
// so that the Client asks the provider before sending a key it cannot
// prove new. Default DefaultLossWindow; at least the providers' key
// retention, since a charge older than that could not be replayed anyway.
func WithLossWindow(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("redis: loss window %v: want positive", d)
		}
		c.lossWindow = d
		return nil
	}
}
