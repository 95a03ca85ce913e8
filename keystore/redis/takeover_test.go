// The harness in internal/fleet is not on the KeyStore contract v2 yet;
// these tests build with -tags idempay_fleet once it is, and the tag goes.

//go:build idempay_fleet

package redis

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTakeover kills a process holding leases on intents it has sent and
// lets another take them over through the key prefix (see fleet.Takeover).
func TestTakeover(t *testing.T) { fleet.Takeover(t, fleetStore()) }
