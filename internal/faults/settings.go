package faults

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Defaults of Settings.
const (
	DefaultLease     = 2 * time.Second
	DefaultRetention = 24 * time.Hour
)

// ErrNegative is returned for a negative duration or count in a fake's
// settings.
var ErrNegative = errors.New("negative duration or count")

// Settings are what every fake is configured with. The zero value, with
// defaults applied, honours keys for a day with a two-second lease, injects
// no faults and reads time.Now.
type Settings struct {
	Lease     time.Duration // how long a claim on a key blocks others; DefaultLease
	Retention time.Duration // how long a key is remembered; DefaultRetention
	Faults    fakes.Rates   // random faults per request
	Seed      uint64        // of the random faults: the same seed, the same faults
	// RetryAfter is sent with the 503 of Unavailable.
	RetryAfter time.Duration
	// Reset ends dropped connections with a TCP reset.
	Reset bool
	// CloseConnections answers every request with Connection: close, so
	// that every drop reaches the client (net/http resends a request with
	// an Idempotency-Key header on a reused connection that failed).
	CloseConnections bool
	// Lenient carries out the refunds and captures a provider refuses (the
	// books' Problem), so that the duplicate-money check shows them.
	Lenient bool
	Now     func() time.Time // the clock of leases, retention and timestamps
}

// Validate returns ErrNegative for a negative duration, or
// fakes.ErrBadRates.
func (s Settings) Validate() error {
	if err := NonNegative(s.Lease, s.Retention, s.RetryAfter); err != nil {
		return err
	}
	return s.Faults.Validate()
}

// NonNegative returns ErrNegative if any of ds is negative.
func NonNegative(ds ...time.Duration) error {
	for _, d := range ds {
		if d < 0 {
			return ErrNegative
		}
	}
	return nil
}

// WithDefaults returns s with its zero fields defaulted.
func (s Settings) WithDefaults() Settings {
	if s.Lease == 0 {
		s.Lease = DefaultLease
	}
	if s.Retention == 0 {
		s.Retention = DefaultRetention
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	return s
}

// Gate returns a gate drawing from a new injector at s's rates and seed,
// counting on a new counter, dropping and delaying as s says.
func (s Settings) Gate() *Gate {
	return &Gate{Faults: NewInjector(s.Faults, s.Seed), Traffic: NewCounter(), Reset: s.Reset, RetryAfter: s.RetryAfter}
}

// SetFaults sets the random fault rates and their seed, refusing bad rates
// with fakes.ErrBadRates.
func (s *Settings) SetFaults(r fakes.Rates, seed uint64) error {
	if err := r.Validate(); err != nil {
		return err
	}
	s.Faults, s.Seed = r, seed
	return nil
}

// SetLease sets the lease on a claimed key; it must be positive.
func (s *Settings) SetLease(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("lease %v is not positive", d)
	}
	s.Lease = d
	return nil
}

// SetRetention sets how long a key is remembered; it must be positive.
func (s *Settings) SetRetention(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("key retention %v is not positive", d)
	}
	s.Retention = d
	return nil
}

// SetClock sets the clock; it must not be nil.
func (s *Settings) SetClock(now func() time.Time) error {
	if now == nil {
		return errors.New("clock is nil")
	}
	s.Now = now
	return nil
}

// SetRetryAfter sets the Retry-After of injected 503s; it must not be
// negative.
func (s *Settings) SetRetryAfter(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("Retry-After %v is negative", d)
	}
	s.RetryAfter = d
	return nil
}

// AtCleanup makes t close the server (close) when it ends, then run check
// and fail t with its error: the duplicate-money check no test forgets.
func AtCleanup(t testing.TB, close func(), check func() error) {
	t.Cleanup(func() {
		t.Helper()
		close()
		if err := check(); err != nil {
			t.Errorf("%v", err)
		}
	})
}
