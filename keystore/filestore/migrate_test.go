package filestore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/filestore"
	bolt "go.etcd.io/bbolt"
)

// format1Day is day d of March 2024 in testdata/format1.db, written by
// testdata/genformat1.go with the store of commit 6d33e90 (file format 1).
func format1Day(d int) time.Time { return time.Date(2024, 3, d, 9, 0, 0, 123456000, time.UTC) }

const (
	format1A = "stripe:acct_1"
	format1B = "omise:acct_2"
)

// copyFormat1 copies the format 1 file into a fresh directory.
func copyFormat1(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/format1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMigrateFormat1 opens a file written by the last version of format 1:
// every record reads as it was written, closed ones closed at their last
// update, the leases of the process that wrote it are void, and the closed
// index is migrated to closing times (Expire keeps an intent settled late
// that format 1 would have expired by its creation).
func TestMigrateFormat1(t *testing.T) {
	path := copyFormat1(t)
	c := fakes.NewClock(format1Day(20).Add(7*24*time.Hour - time.Hour))
	s := reopen(t, path, c)
	checkFormat1Records(t, s)
	if n := s.VoidedLeases(); n != 3 {
		t.Errorf("VoidedLeases = %d; want the 3 leases of the process that wrote the file", n)
	}
	if open := listAll(t, s, format1A, 2); len(open) != 3 || open[0].ID != "open-leased" || open[1].ID != "open-free" || open[2].ID != "pending-leased" {
		t.Errorf("ListOpen(%s) = %+v; want open-leased, open-free, pending-leased", format1A, open)
	}
	// Closed at day 5 and days 8 to 9: expired. Created at day 1 but
	// closed at day 20: kept.
	if n, err := s.Expire(t.Context(), 7*24*time.Hour); err != nil || n != 41 {
		t.Errorf("Expire = %d, %v; want the 41 records closed before day 13", n, err)
	}
	if _, err := s.Load(t.Context(), format1A, "succeeded-late"); err != nil {
		t.Errorf("Load(succeeded-late) after Expire = %v; want it kept: it was closed 6 days ago", err)
	}
	s.Close()
	if v := fileFormat(t, path); v != 2 {
		t.Errorf("file format after Open = %d; want 2", v)
	}
	// Opening the migrated file again changes nothing.
	s = reopen(t, path, c)
	defer s.Close()
	if r, err := s.Load(t.Context(), format1A, "succeeded-late"); err != nil || !r.ClosedAt.Equal(format1Day(20)) {
		t.Errorf("after a second Open, succeeded-late = %+v, %v", r, err)
	}
	if n, err := s.Expire(t.Context(), 7*24*time.Hour); err != nil || n != 0 {
		t.Errorf("Expire after a second Open = %d, %v; want 0", n, err)
	}
}

// checkFormat1Records checks what genformat1.go wrote, read through s.
func checkFormat1Records(t *testing.T, s *filestore.Store) {
	t.Helper()
	want := map[string]struct {
		state            idempay.State
		created, closed  time.Time
		providerRef, res string
	}{
		"open-leased":    {idempay.StateOpen, format1Day(1), time.Time{}, "", ""},
		"open-free":      {idempay.StateOpen, format1Day(2), time.Time{}, "", ""},
		"pending-leased": {idempay.StatePending, format1Day(3), time.Time{}, "pi_3", `{"status":"requires_action"}`},
		"succeeded-late": {idempay.StateSucceeded, format1Day(1), format1Day(20), "pi_4", `{"status":"succeeded"}`},
		"failed-early":   {idempay.StateFailed, format1Day(5), format1Day(5).Add(time.Minute), "", `{"decline":"card_declined"}`},
	}
	for id, w := range want {
		r, err := s.Load(t.Context(), format1A, id)
		switch {
		case err != nil:
			t.Errorf("Load(%s): %v", id, err)
		case r.Attempt != 1 || r.Key != "key-"+id || r.Fingerprint != "fp-"+id || r.State != w.state || r.Creator != "":
			t.Errorf("%s = %+v; want attempt 1, its key and fingerprint, %s, no creator", id, r, w.state)
		case !r.CreatedAt.Equal(w.created) || !r.ClosedAt.Equal(w.closed) || r.ProviderRef != w.providerRef || string(r.Result) != w.res:
			t.Errorf("%s = %+v; want created %v, closed %v, %q, %q", id, r, w.created, w.closed, w.providerRef, w.res)
		case r.LeaseOwner != "" || !r.LeaseUntil.IsZero():
			t.Errorf("%s leased to %q until %v; want the dead writer's lease void", id, r.LeaseOwner, r.LeaseUntil)
		}
	}
	if r, err := s.Load(t.Context(), format1B, "done-39"); err != nil || r.State != idempay.StateSucceeded || r.ProviderRef != "chrg_done-39" {
		t.Errorf("Load(%s, done-39) = %+v, %v", format1B, r, err)
	}
}

// TestFormat1RecordsAreUsable: a migrated file's records take the new
// contract's operations: a claim, a new attempt over a failed one.
func TestFormat1RecordsAreUsable(t *testing.T) {
	path, c := copyFormat1(t), fakes.NewClock(format1Day(25))
	s := reopen(t, path, c)
	heir := idempay.ReserveRequest{Namespace: format1A, ID: "open-leased", Attempt: 1, Key: "key-new",
		Fingerprint: "fp-open-leased", Owner: "heir", Lease: time.Minute}
	if res := mustReserve(t, s, heir); !res.Claimed || res.Created || res.Record.Key != "key-open-leased" {
		t.Errorf("claim of a format 1 record = %+v; want claimed with its key, not created", res)
	}
	next := idempay.ReserveRequest{Namespace: format1A, ID: "failed-early", Attempt: 2, Key: "key-2",
		Fingerprint: "fp-2", Owner: "o", Lease: time.Minute}
	res := mustReserve(t, s, next)
	if !res.Created || len(res.Record.History) != 1 || res.Record.History[0].Key != "key-failed-early" ||
		!res.Record.History[0].ClosedAt.Equal(format1Day(5).Add(time.Minute)) {
		t.Errorf("new attempt over a format 1 failed record = %+v", res)
	}
	mustResolve(t, s, closeWith(res.Record, idempay.StateSucceeded))
	if err := s.Resolve(t.Context(), closeWith(res.Record, idempay.StateFailed)); !errors.Is(err, idempay.ErrAlreadyResolved) {
		t.Errorf("second Resolve = %v; want ErrAlreadyResolved", err)
	}
	// The indexes moved with the records: Open counts them.
	s.Close()
	s = reopen(t, path, c)
	s.Close()
}

// fileFormat reads the file format byte with bbolt.
func fileFormat(t *testing.T, path string) byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v []byte
	db.View(func(tx *bolt.Tx) error {
		v = append(v, tx.Bucket([]byte("meta")).Get([]byte("format"))...)
		return nil
	})
	if len(v) != 1 {
		t.Fatalf("format = %v", v)
	}
	return v[0]
}
