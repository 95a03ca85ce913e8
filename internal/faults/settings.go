package faults

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Defaults of Settings.
const (
	DefaultLease     = 2 * time.Second
	DefaultRetention = 24 * time.Hour
)

// Settings are what every fake is configured with: the fakes.Settings a
// test gives (WithSettings), and the random faults (WithFaultRates).
type Settings struct {
	fakes.Settings
	Faults fakes.Rates // random faults per request
	Seed   uint64      // of the random faults: the same seed, the same faults
	T      testing.TB  // WithTest's: the test that closes the server and checks its books
}

// SetTest ties the settings to t, refusing nil.
func (c *Settings) SetTest(t testing.TB) error {
	if t == nil {
		return errors.New("testing.TB is nil")
	}
	c.T = t
	return nil
}

// Check runs close and check when the settings' test ends (see AtCleanup),
// if WithTest gave one.
func (c Settings) Check(close func(), check func() error) {
	if c.T != nil {
		AtCleanup(c.T, close, check)
	}
}

// SetSettings lays s over the settings, refusing bad ones.
func (c *Settings) SetSettings(s fakes.Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	c.Settings = c.Settings.Merge(s)
	return nil
}

// SetFaults sets the random fault rates and their seed, refusing bad rates
// with fakes.ErrBadRates.
func (c *Settings) SetFaults(r fakes.Rates, seed uint64) error {
	if err := r.Validate(); err != nil {
		return err
	}
	c.Faults, c.Seed = r, seed
	return nil
}

// WithDefaults returns s with its zero fields defaulted.
func (c Settings) WithDefaults() Settings {
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// Gate returns a gate drawing from script (a new one at the settings'
// rates and seed when nil), counting on a new counter, dropping and
// delaying as the settings say.
func (c Settings) Gate(script *fakes.Script) *Gate {
	if script == nil {
		script = fakes.NewScript(c.Faults, c.Seed)
	}
	return &Gate{Faults: script, Traffic: NewCounter(), Reset: c.DropReset, RetryAfter: c.RetryAfter}
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
