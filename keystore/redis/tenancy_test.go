// The harness in internal/fleet is not on the KeyStore contract v2 yet;
// these tests build with -tags idempay_fleet once it is, and the tag goes.

//go:build idempay_fleet

package redis

import (
	"testing"

	"github.com/idempay/idempay/internal/fleet"
)

// TestTenancy charges one intent ID for two merchant accounts through one
// key prefix: two records, two keys, two charges (see fleet.Tenancy).
func TestTenancy(t *testing.T) { fleet.Tenancy(t, fleetStore()) }
