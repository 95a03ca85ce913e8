package webhook

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/idempay/idempay"
)

// DefaultLease is how long each claim or renewal of an event's lease lasts
// while its handler runs, when WithLease is not given. The lease is renewed
// every third of it, so a handler may take as long as it needs; a process
// that crashes mid-handler leaves the event leased at most this long, and
// deliveries meanwhile are answered 409 until the provider tries again.
const DefaultLease = 10 * time.Second

// deduperConfig is what the Deduper options set.
type deduperConfig struct {
	lease       time.Duration
	now         func() time.Time
	instance    string
	fingerprint func([]byte) string
}

type deduperOptionFunc func(*deduperConfig) error

func (f deduperOptionFunc) applyDeduper(c *deduperConfig) error { return f(c) }

// WithLease sets the term of a delivery's lease on its event (default
// DefaultLease), renewed while the handler runs. It is refused below
// idempay.MinLease.
func WithLease(d time.Duration) DeduperOption {
	return deduperOptionFunc(func(c *deduperConfig) error {
		if d < idempay.MinLease {
			return fmt.Errorf("webhook: lease %s is shorter than idempay.MinLease (%s)", d, idempay.MinLease)
		}
		c.lease = d
		return nil
	})
}

// WithInstance names this process in lease owners (default: host name and
// process ID), so that a record stuck under a lease says who took it. Each
// delivery adds a random suffix, so two deliveries never share a lease,
// even in one process. It is refused if name is empty, longer than 100
// bytes, or not printable ASCII.
func WithInstance(name string) DeduperOption {
	return deduperOptionFunc(func(c *deduperConfig) error {
		if name == "" || len(name) > 100 || !printable(name) {
			return errors.New("webhook: instance name must be 1 to 100 printable ASCII characters")
		}
		c.instance = name
		return nil
	})
}

// WithFingerprint replaces EventFingerprint, the hash that tells a
// redelivery of an event from another event under the same ID, for events
// whose stable part is not their "data" member. fp should hash raw bytes
// as received, never re-encoded JSON. It is refused if fp is nil.
func WithFingerprint(fp func(body []byte) string) DeduperOption {
	return deduperOptionFunc(func(c *deduperConfig) error {
		if fp == nil {
			return errors.New("webhook: WithFingerprint(nil)")
		}
		c.fingerprint = fp
		return nil
	})
}

// newDeduperConfig applies opts over the defaults.
func newDeduperConfig(opts []DeduperOption) (deduperConfig, error) {
	c := deduperConfig{lease: DefaultLease, now: time.Now, fingerprint: EventFingerprint}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("webhook: nil DeduperOption")
		}
		if err := o.applyDeduper(&c); err != nil {
			return c, err
		}
	}
	if c.instance == "" {
		c.instance = defaultInstance()
	}
	return c, nil
}

// defaultInstance is "host:pid", enough to find the process holding a
// lease; uniqueness comes from the per-delivery suffix, not from this.
func defaultInstance() string {
	host, err := os.Hostname()
	if err != nil || host == "" || !printable(host) {
		host = "unknown-host"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// printable reports whether s is printable ASCII without spaces.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
