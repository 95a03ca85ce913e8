package postgres

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTakeover kills a process holding leases on intents it has sent and
// lets another take them over through the schema (see fleet.Takeover).
func TestTakeover(t *testing.T) { fleet.Takeover(t, fleetStore()) }
