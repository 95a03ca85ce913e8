package redis

import (
	"fmt"
	"strings"
	"time"
)

// Defaults for the options.
const (
	DefaultPrefix      = "idempay:"
	DefaultExpireBatch = 1000
)

// Option configures a Store. Options validate their input: New returns the
// error of the first invalid one.
type Option func(*config) error

type config struct {
	prefix      string
	closedTTL   time.Duration
	expireBatch int
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
// that settled it. Open and pending records never get a TTL. Choose d at
// least as long as the providers' key retention (24 hours for Stripe and
// Omise), so a retry within the window is answered from the store.
//
// With a TTL, each settling Resolve also drops from the namespace's closed
// index the entries of records created more than d before it, which Redis
// has either deleted already or will delete within d; this keeps the index
// bounded when Expire is never called. Expire then deletes only the settled
// records still in the index. d must be at least one millisecond; zero (the
// default) means no TTL, and Expire is the only way records go.
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
