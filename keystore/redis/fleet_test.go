package redis

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fleet"
)

// fleetStore shows the store to the fleet harness: one fresh key prefix
// per test, which every process opens through its own connection pool, as
// the instances of a service would.
func fleetStore() fleet.Store {
	return fleet.Store{
		Name: "redis",
		New: func(t testing.TB) string {
			// Every key under the prefix is deleted when t ends.
			return freshPrefix(t, newClient(t, 0))
		},
		Open: func(t testing.TB, prefix string) idempay.KeyStore {
			s, err := New(newClient(t, 0), WithPrefix(prefix), WithLossyServer())
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return s
		},
	}
}

// TestFleet races -fleet.procs processes over -fleet.intents intents on one
// key prefix, with faults on, then settles them (see fleet.Race).
func TestFleet(t *testing.T) { fleet.Race(t, fleetStore()) }
