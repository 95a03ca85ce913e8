package postgres

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fleet"
)

// fleetStore shows the store to the fleet harness: one fresh schema per
// test, which every process opens through its own pool, as the instances
// of a service would.
func fleetStore() fleet.Store {
	return fleet.Store{
		Name: "postgres",
		New: func(t testing.TB) string {
			// The schema is created by the first New of a Store and
			// dropped when t ends, through this pool.
			return freshSchema(t, newPool(t, poolConfig(t)))
		},
		Open: func(t testing.TB, schema string) idempay.KeyStore {
			s, err := New(context.Background(), newPool(t, poolConfig(t)), WithSchema(schema))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return s
		},
	}
}

// TestFleet races -fleet.procs processes over -fleet.intents intents on one
// schema, with faults on, then settles them (see fleet.Race).
func TestFleet(t *testing.T) { fleet.Race(t, fleetStore()) }
