package refserver

import (
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// ManualClock is a clock that moves only when told, for tests of leases
// and retention that must not sleep. Pass its Now method as Config.Now.
// It is safe for concurrent use.
type ManualClock = fakes.Clock

// NewManualClock returns a clock reading start.
func NewManualClock(start time.Time) *ManualClock { return fakes.NewClock(start) }
