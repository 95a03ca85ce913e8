package webhook

import (
	"errors"
	"time"
)

// WithClock makes a verifier or a Deduper read the time from now instead
// of time.Now, so that the package's tests age a signature or let a lease
// run out without sleeping. It lives here, not in the shipped API: a
// caller's verifier reads the host's clock.
func WithClock(now func() time.Time) clockOption { return clockOption{now: now} }

// clockOption configures both a verifier and a Deduper, so that a test
// hands one fake clock to both.
type clockOption struct{ now func() time.Time }

func (o clockOption) applyVerifier(c *verifierConfig) error {
	if o.now == nil {
		return errors.New("webhook: WithClock(nil)")
	}
	c.now = o.now
	return nil
}

func (o clockOption) applyDeduper(c *deduperConfig) error {
	if o.now == nil {
		return errors.New("webhook: WithClock(nil)")
	}
	c.now = o.now
	return nil
}
