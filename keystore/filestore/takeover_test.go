package filestore_test

import (
	"path/filepath"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fleet"
	"github.com/idempay/idempay/keystore/filestore"
)

// TestTakeover kills a process holding leases on intents it has sent and
// lets the next process on the same file take them over (see
// fleet.Takeover). bbolt locks the file, so the two run one after the
// other: a restart, not a fleet. While the holder lives, its heartbeat
// keeps a second client in its process out; once it is dead, the next
// Open voids its leases, and the heir resumes every intent at once: no
// lease refusal, a stall far under one lease.
func TestTakeover(t *testing.T) { fleet.Takeover(t, fleetStore()) }

// fleetStore shows the store to the fleet harness: a file in a temporary
// directory, opened by one process at a time.
func fleetStore() fleet.Store {
	return fleet.Store{
		Name:      "filestore",
		New:       func(t testing.TB) string { return filepath.Join(t.TempDir(), "keys.db") },
		Exclusive: true,
		Open: func(t testing.TB, path string) idempay.KeyStore {
			s, err := filestore.Open(path, filestore.WithSweepInterval(0))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			return s
		},
	}
}
