package fakestripe

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

// Config configures a Server. The zero value accepts any bearer secret and
// injects no faults.
type Config struct {
	// APIKey, if set, is the only secret accepted; otherwise any non-empty
	// bearer secret is, and each secret is its own account.
	APIKey string
	// Lease bounds how long a claim on a key blocks others without
	// completing. Default DefaultLease.
	Lease time.Duration
	// Retention is how long a key is remembered. Default DefaultRetention.
	Retention time.Duration
	// SearchDelay is how long after its creation a PaymentIntent becomes
	// visible to search. Zero: at once.
	SearchDelay time.Duration
	// Faults are the probabilities of each fault per charge request, drawn
	// from a source seeded with Seed.
	Faults fakes.Rates
	Seed   uint64 // the same seed and order of requests give the same faults
	// StoreFailureOnDecline answers a declined confirmation with a 500
	// stored under its key, as Stripe does when a request fails after it
	// started executing, while the PaymentIntent stays as the decline left
	// it (requires_payment_method with a last_payment_error): the 402 is
	// never seen, the intent is found only by search.
	StoreFailureOnDecline bool
	// RetryAfter is sent, in whole seconds, with injected 503s.
	RetryAfter time.Duration
	// ShouldRetry sends Stripe-Should-Retry: true on 409 and 503 answers
	// and false on 400, 402 and 500 answers.
	ShouldRetry bool
	// DropWithReset ends dropped connections with a TCP reset.
	DropWithReset bool
	// CloseConnections answers every request with Connection: close.
	CloseConnections bool
	// Now is the clock for leases, retention and search. Default time.Now.
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
	if c.Lease < 0 || c.Retention < 0 || c.SearchDelay < 0 || c.RetryAfter < 0 {
		return errors.New("fakestripe: negative duration")
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
