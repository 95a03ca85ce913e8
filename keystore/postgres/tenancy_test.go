package postgres

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTenancy charges one intent ID for two merchant accounts through one
// schema: two records, two keys, two charges (see fleet.Tenancy).
func TestTenancy(t *testing.T) { fleet.Tenancy(t, fleetStore()) }
