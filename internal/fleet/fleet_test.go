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
// live lease lets another flight send while the holder may still be
// sending.
func TestTakeoverCatchesLeaseIgnored(t *testing.T) {
	out := mustFail(t, "TestBrokenLease", "-takeover.intents=6", "-takeover.lease=600ms")
	for _, want := range []string{"while the holder's leases were live", "want unknown, ErrInProgress, nothing sent"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run of a store ignoring leases does not say %q:\n%s", want, out)
		}
	}
}

// TestTakeoverCatchesRenewalsDropped: a store that answers a renewal as
// granted without extending the lease (the holder believes it still holds
// it) lets another flight in once the first lease term is over, while the
// holder's request is still on the wire.
func TestTakeoverCatchesRenewalsDropped(t *testing.T) {
	out := mustFail(t, "TestBrokenRenewal", "-takeover.intents=6", "-takeover.lease=600ms")
	for _, want := range []string{"while the holder's leases were live", "was never renewed",
		"want unknown, ErrInProgress, nothing sent"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run of a store dropping renewals does not say %q:\n%s", want, out)
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
	Takeover(t, brokenFilestore("filestore ignoring leases", func(s idempay.KeyStore) idempay.KeyStore { return leaseIgnored{s} }))
}

func TestBrokenRenewal(t *testing.T) {
	if os.Getenv(envBroken) == "" {
		t.Skip("fails by design; run by TestTakeoverCatchesRenewalsDropped")
	}
	Takeover(t, brokenFilestore("filestore dropping renewals", func(s idempay.KeyStore) idempay.KeyStore { return renewalsDropped{s} }))
}

// brokenFilestore is a file store behind wrap.
func brokenFilestore(name string, wrap func(idempay.KeyStore) idempay.KeyStore) Store {
	return Store{
		Name:      name,
		New:       func(t testing.TB) string { return filepath.Join(t.TempDir(), "keys.db") },
		Exclusive: true,
		Open: func(t testing.TB, path string) idempay.KeyStore {
			s, err := filestore.Open(path, filestore.WithSweepInterval(0))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return wrap(s)
		},
	}
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

// renewalsDropped answers a Reserve by the lease's current owner (a
// renewal) with the record as stored, claimed, and writes nothing: the
// lease runs out one term after it was taken, whatever the heartbeat does.
type renewalsDropped struct{ idempay.KeyStore }

func (s renewalsDropped) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	rec, err := s.Load(ctx, r.Namespace, r.ID)
	if err == nil && rec.LeaseOwner == r.Owner && rec.Fingerprint == r.Fingerprint && !rec.State.Closed() {
		// Now is a store instant no later than the store's now, so that
		// the age the claim computes from it stays sane.
		return idempay.Reservation{Record: rec, Claimed: true, Now: rec.UpdatedAt}, nil
	}
	return s.KeyStore.Reserve(ctx, r)
}
