package refserver

import (
	"time"

	"github.com/idempay/idempay/internal/faults"
)

// ManualClock is a clock that moves only when told, for tests of leases
// and retention that must not sleep. Pass its Now method as Config.Now.
// It is safe for concurrent use.
type ManualClock = faults.Clock

// NewManualClock returns a clock reading start.
func NewManualClock(start time.Time) *ManualClock { return faults.NewClock(start) }
