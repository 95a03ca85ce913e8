package filestore_test

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTenancy charges one intent ID for two merchant accounts through one
// file: two records, two keys, two charges (see fleet.Tenancy). One process
// often serves several merchants, so the file store owes the same scoping
// as the shared ones.
func TestTenancy(t *testing.T) { fleet.Tenancy(t, fleetStore()) }
