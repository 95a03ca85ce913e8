package webhook

import (
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// DefaultTolerance is how far a signed timestamp may be from the
// verifier's clock, either way, when WithTolerance is not given. Five
// minutes is what Stripe's own libraries use: long enough for a slow
// delivery and a little clock skew, short enough that a captured request
// cannot be replayed for long (and within it, the Deduper answers a replay
// as a duplicate).
const DefaultTolerance = 5 * time.Minute

// VerifierOption configures NewStripe and NewOmise. Options check their
// input; the constructor returns the first error.
type VerifierOption interface {
	applyVerifier(*verifierConfig) error
}

// DeduperOption configures NewDeduper. Options check their input; the
// constructor returns the first error.
type DeduperOption interface {
	applyDeduper(*deduperConfig) error
}

// verifierConfig is what the verifier options set.
type verifierConfig struct {
	previous  []idempay.Secret
	tolerance time.Duration
	now       func() time.Time
}

type verifierOptionFunc func(*verifierConfig) error

func (f verifierOptionFunc) applyVerifier(c *verifierConfig) error { return f(c) }

// ClockOption is the option WithClock returns. It configures both a
// verifier and a Deduper, so that a test hands one fake clock to both.
type ClockOption struct{ now func() time.Time }

func (o ClockOption) applyVerifier(c *verifierConfig) error {
	if o.now == nil {
		return errors.New("webhook: WithClock(nil)")
	}
	c.now = o.now
	return nil
}

func (o ClockOption) applyDeduper(c *deduperConfig) error {
	if o.now == nil {
		return errors.New("webhook: WithClock(nil)")
	}
	c.now = o.now
	return nil
}

// WithClock makes a verifier or a Deduper read the time from now instead
// of time.Now: a test moves time forward to age a signature or to let a
// lease run out, without sleeping. It is refused if now is nil.
func WithClock(now func() time.Time) ClockOption { return ClockOption{now: now} }

// WithTolerance sets how far a signed timestamp may be from now, in either
// direction (default DefaultTolerance). It is refused unless d is
// positive: a verifier that accepts any age accepts a replay.
func WithTolerance(d time.Duration) VerifierOption {
	return verifierOptionFunc(func(c *verifierConfig) error {
		if d <= 0 {
			return fmt.Errorf("webhook: tolerance %s is not positive", d)
		}
		c.tolerance = d
		return nil
	})
}

// WithPreviousSecret makes the verifier also accept signatures made with
// secret, typically the one being retired. Stripe and Omise sign with both
// secrets while a rotation overlaps, and there either secret alone
// verifies; this option covers a rotation without overlap, so that
// deliveries signed with the old secret just before the switch still
// verify once the new one is deployed. Drop it when the tolerance has
// passed. It can be given more than once. It is refused if secret is empty
// or, for Omise, not base64.
func WithPreviousSecret(secret idempay.Secret) VerifierOption {
	return verifierOptionFunc(func(c *verifierConfig) error {
		if secret == "" {
			return errors.New("webhook: previous secret is empty")
		}
		c.previous = append(c.previous, secret)
		return nil
	})
}

// newVerifierConfig applies opts over the defaults.
func newVerifierConfig(opts []VerifierOption) (verifierConfig, error) {
	c := verifierConfig{tolerance: DefaultTolerance, now: time.Now}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("webhook: nil VerifierOption")
		}
		if err := o.applyVerifier(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
