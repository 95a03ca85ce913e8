package idempaytest

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultLease is the Server's default lease on a claimed key. It is short
// on purpose, far below a real server's, so that a test of the Mid fault
// waits a tenth of a second, not seconds, for the key to free up, and
// FastRetry's budget outlasts it.
const DefaultLease = 100 * time.Millisecond

// Option configures a Server. Options check their input; NewServer panics
// on a bad one, as a fixture built wrong should stop the test at once.
type Option func(*serverOptions) error

// serverOptions is what the options set, before NewServer turns it into a
// refserver configuration.
type serverOptions struct {
	rates        FaultRates
	seed         uint64
	replayHeader string
	secret       string
	lease        time.Duration
	now          func() time.Time
	storeErrors  bool
}

// WithFaultRates injects random faults at rates r into every charge
// request, drawn from a source seeded with seed: the same seed and the same
// order of requests give the same faults, so a failing chaos test can be
// replayed. Concurrent requests arrive in no fixed order; a test that
// needs exact reproduction sends them one at a time. It is refused if a
// rate is outside [0, 1] or the rates sum to more than 1.
func WithFaultRates(r FaultRates, seed uint64) Option {
	return func(o *serverOptions) error {
		if err := r.Validate(); err != nil {
			return err
		}
		o.rates, o.seed = r, seed
		return nil
	}
}

// WithReplayHeader sets the header that marks a replayed answer (value
// "true"). Default "Idempotency-Replayed"; "Idempotent-Replayed" is
// Stripe's spelling. NewClient tells its client to read the same header.
// It is refused if name is not a valid header name.
func WithReplayHeader(name string) Option {
	return func(o *serverOptions) error {
		if !isToken(name) {
			return fmt.Errorf("replay header %q is not a valid header name", name)
		}
		o.replayHeader = name
		return nil
	}
}

// WithSecret makes the server require "Authorization: Bearer <secret>" on
// every request and answer 401 without it. NewClient sends it. It is
// refused if secret is empty or has spaces or control characters.
func WithSecret(secret string) Option {
	return func(o *serverOptions) error {
		if secret == "" || strings.ContainsFunc(secret, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return errors.New("secret is empty or has spaces or control characters")
		}
		o.secret = secret
		return nil
	}
}

// WithLease sets how long a claim on a key holds without completing
// (DefaultLease if not set). After a Mid fault the key answers 409 until
// the lease runs out; a longer lease lets a test see the client give up
// with idempay.ErrInProgress. It is refused if d is not positive.
func WithLease(d time.Duration) Option {
	return func(o *serverOptions) error {
		if d <= 0 {
			return fmt.Errorf("lease %v is not positive", d)
		}
		o.lease = d
		return nil
	}
}

// WithClock gives the server a clock for leases and key retention, so a
// test can expire a lease by moving its clock instead of sleeping. It is
// refused if now is nil.
func WithClock(now func() time.Time) Option {
	return func(o *serverOptions) error {
		if now == nil {
			return errors.New("clock is nil")
		}
		o.now = now
		return nil
	}
}

// WithStoredServerErrors makes the server store the 500 of an Internal
// fault under the key and replay it, as Stripe does: the idempay client
// then ends the charge at once with idempay.ErrStoredFailure, outcome
// unknown. Without it the key is released and a retry is charged.
func WithStoredServerErrors() Option {
	return func(o *serverOptions) error {
		o.storeErrors = true
		return nil
	}
}

// isToken reports whether s is an HTTP token (RFC 9110), the form of a
// header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
