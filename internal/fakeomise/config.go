package fakeomise

import (
	"errors"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultLease     = 2 * time.Second
	DefaultRetention = 24 * time.Hour
)

// Config configures a Server. The zero value accepts any secret key,
// ignores Idempotency-Key and injects no faults.
type Config struct {
	// SecretKey, if set, is the only secret accepted as Basic user;
	// otherwise any non-empty user is, and each is its own account.
	SecretKey string
	// HonourKeys de-duplicates charges by Idempotency-Key, which Omise does
	// not document.
	HonourKeys bool
	// Lease and Retention govern honoured keys. Defaults DefaultLease and
	// DefaultRetention.
	Lease, Retention time.Duration
	// ListDelay hides a charge from GET /charges until this long after its
	// creation. Zero (the default) lists it at once. A delay models a
	// lagging list, or a charge still being created when the list is read:
	// what the single-use token must guard against.
	ListDelay time.Duration
	// Neighbours, if positive, makes the account busy with another
	// integration: every Neighbours-th charge request that reaches
	// processing is preceded by a charge that integration makes on the same
	// account, in the shape of Omise's recorded charges (metadata with
	// numbers and booleans, no idempay tags, some declined). Lookups by
	// listing must read past them.
	Neighbours int
	// LookupFailures is the probability that a lookup (GET /charges or
	// GET /charges/{id}) answers 503, drawn from a source seeded with Seed:
	// lookups fail too, and a failed lookup must never allow a resend.
	LookupFailures float64
	// Faults are the probabilities of each fault per charge request, drawn
	// from a source seeded with Seed.
	Faults fakes.Rates
	Seed   uint64 // the same seed and order of requests give the same faults
	// RetryAfter is sent, in whole seconds, with injected 503s.
	RetryAfter time.Duration
	// DropWithReset ends dropped connections with a TCP reset.
	DropWithReset bool
	// CloseConnections answers every request with Connection: close.
	CloseConnections bool
	// Now is the clock for charges' creation times and leases. Default
	// time.Now.
	Now func() time.Time
	// OnRequest, if set, is called for every charge request as it arrives,
	// before any fault or processing.
	OnRequest func(RequestInfo)
}

// RequestInfo describes a charge request as it arrives: its Key is the
// Idempotency-Key header, trimmed; its Intent the value of
// metadata[idempay_intent], if present; its Form the parsed body (the
// Request's body has been read).
type RequestInfo = faults.FormRequest

// Validate reports whether c can configure a Server.
func (c Config) Validate() error {
	if c.Lease < 0 || c.Retention < 0 || c.RetryAfter < 0 || c.ListDelay < 0 || c.Neighbours < 0 {
		return errors.New("fakeomise: negative duration")
	}
	if !(c.LookupFailures >= 0 && c.LookupFailures <= 1) {
		return errors.New("fakeomise: LookupFailures outside [0, 1]")
	}
	return c.Faults.Validate()
}

func (c Config) withDefaults() Config {
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
