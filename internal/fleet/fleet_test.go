package fleet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
)

// The tests here check the harness itself: a harness that passes a store
// which is not shared, or one that hands out leases to anyone, proves
// nothing about the stores it passes. Each runs a broken store through the
// harness in a separate process (the test binary again) and expects that
// run to fail with the right complaints.

// envBroken lets the tests of broken stores run; they fail by design.
const envBroken = "IDEMPAY_FLEET_BROKEN"

// TestRaceCatchesUnsharedStore: processes that each keep their own store
// send each intent under several keys, and the server charges it for each.
func TestRaceCatchesUnsharedStore(t *testing.T) {
	out := mustFail(t, "TestBrokenUnshared", "-fleet.intents=40", "-fleet.procs=3")
	for _, want := range []string{
		"distinct keys",                    // KeysByOrder
		"times, want exactly once",         // the ledger
		"arrived before the store held it", // OnRequest on the parent's store
		"the ledger's is",                  // an answer names another charge
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the run of an unshared store does not say %q:\n%s", want, out)
		}
	}
}

// TestTakeoverCatchesLeaseIgnored: a store that lets a second owner claim a
// live lease lets the heir send while the holder may still be sending.
func TestTakeoverCatchesLeaseIgnored(t *testing.T) {
	out := mustFail(t, "TestBrokenLease", "-takeover.intents=6")
	for _, want := range []string{"while the holder's leases were live", "want unknown, ErrInProgress, nothing sent"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run of a store ignoring leases does not say %q:\n%s", want, out)
		}
	}
}

func TestBrokenUnshared(t *testing.T) {
	if os.Getenv(envBroken) == "" {
		t.Skip("fails by design; run by TestRaceCatchesUnsharedStore")
	}
	Race(t, Store{
		Name: "memstore per process",
		New:  func(testing.TB) string { return "" },
		Open: func(testing.TB, string) idempay.KeyStore { return memstore.New() },
	})
}

func TestBrokenLease(t *testing.T) {
	if os.Getenv(envBroken) == "" {
		t.Skip("fails by design; run by TestTakeoverCatchesLeaseIgnored")
	}
	Takeover(t, Store{
		Name:      "filestore ignoring leases",
		New:       func(t testing.TB) string { return filepath.Join(t.TempDir(), "keys.db") },
		Exclusive: true,
		Open: func(t testing.TB, path string) idempay.KeyStore {
			s, err := filestore.Open(path, filestore.WithSweepInterval(0))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return leaseIgnored{s}
		},
	})
}

// leaseIgnored claims every unsettled record for whoever asks.
type leaseIgnored struct{ idempay.KeyStore }

func (s leaseIgnored) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	res, err := s.KeyStore.Reserve(ctx, r)
	if err == nil && !res.Record.State.Closed() {
		res.Claimed = true
	}
	return res, err
}

// mustFail runs test in a new process of the test binary and returns its
// output, failing t unless the run failed.
func mustFail(t *testing.T, test string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + test + "$", "-test.count=1", "-test.v"}, flags...)...)
	cmd.Env = append(os.Environ(), envBroken+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Fatalf("%s passed; the harness let a broken store through:\n%s", test, out)
	case !errors.As(err, &exit):
		t.Fatalf("%s: %v", test, err)
	}
	return string(out)
}
