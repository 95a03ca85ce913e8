package redis

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTakeover kills a process holding leases on intents it has sent and
// lets another take them over through the key prefix (see fleet.Takeover).
func TestTakeover(t *testing.T) { fleet.Takeover(t, fleetStore()) }
