package filestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// inFile reads the record of ns/id as a crash would leave it: from the
// store file and its log, past what is written in memory.
func inFile(t *testing.T, s *Store, id string) (idempay.Record, bool) {
	t.Helper()
	var r idempay.Record
	found := false
	var logID []byte
	var applied uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		logID, applied = logState(tx)
		v := tx.Bucket(bucketRecords).Get(recordKey("ns", id))
		if v == nil {
			return nil
		}
		found = true
		var err error
		r, err = decodeRecord("ns", id, v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := readLog(s.log.f, logID, applied)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if string(e.key) == string(recordKey("ns", id)) {
			r, found = e.rec, true
		}
	}
	return r, found
}

// TestWhatIsSyncedBeforeReturning: with a batch delay far longer than the
// test, the writes whose loss no replay corrects (a new key, a claim by a
// new owner, a failed or pending close, a Durable close) are in the file
// when they return; a success and a renewal need not be; and a read of a
// record not yet in the file waits until it is, so that no answer rests on
// a write a crash could still take back.
func TestWhatIsSyncedBeforeReturning(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(time.Hour), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reserve := func(id, owner string) idempay.Reservation {
		res, err := s.Reserve(ctx, idempay.ReserveRequest{Namespace: "ns", ID: id, Attempt: 1, Key: "k-" + id,
			Fingerprint: "fp", Owner: owner, Lease: time.Minute})
		if err != nil || !res.Claimed {
			t.Fatalf("Reserve(%s, %s) = %+v, %v", id, owner, res, err)
		}
		return res
	}
	resolve := func(id string, st idempay.State, durable bool) {
		if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: id, Key: "k-" + id, State: st, Durable: durable}); err != nil {
			t.Fatalf("Resolve(%s, %s): %v", id, st, err)
		}
	}
	synced := func(what, id string, want idempay.State) {
		t.Helper()
		if r, ok := inFile(t, s, id); !ok || r.State != want {
			t.Errorf("%s: the file holds %+v (found %v) when the call returns; want it %s", what, r, ok, want)
		}
	}

	for _, tc := range []struct {
		id      string
		st      idempay.State
		durable bool
	}{{"failed", idempay.StateFailed, false}, {"pending", idempay.StatePending, false}, {"durable", idempay.StateSucceeded, true}} {
		reserve(tc.id, "o")
		synced("a new key", tc.id, idempay.StateOpen)
		resolve(tc.id, tc.st, tc.durable)
		synced("a "+string(tc.st)+" close (Durable "+map[bool]string{true: "set", false: "unset"}[tc.durable]+")", tc.id, tc.st)
	}

	reserve("ok", "o")
	resolve("ok", idempay.StateSucceeded, false)
	if r, _ := inFile(t, s, "ok"); r.State != idempay.StateOpen {
		t.Errorf("a success is in the file (%s) before any durable write carried it; want it to ride on the next commit", r.State)
	}
	r, err := s.Load(ctx, "ns", "ok")
	if err != nil || r.State != idempay.StateSucceeded {
		t.Fatalf("Load = %+v, %v; want succeeded", r, err)
	}
	synced("Load of a success written in memory", "ok", idempay.StateSucceeded)

	first := reserve("lease", "a")
	renewed := reserve("lease", "a")
	if f, _ := inFile(t, s, "lease"); !f.LeaseUntil.Equal(first.Record.LeaseUntil) || !renewed.Record.LeaseUntil.After(first.Record.LeaseUntil) {
		t.Errorf("the file holds lease until %v after a renewal to %v (first %v); want the renewal to ride on the next commit",
			f.LeaseUntil, renewed.Record.LeaseUntil, first.Record.LeaseUntil)
	}
	if res, err := s.Reserve(ctx, idempay.ReserveRequest{Namespace: "ns", ID: "lease", Attempt: 1, Key: "x",
		Fingerprint: "fp", Owner: "b", Lease: time.Minute}); err != nil || res.Claimed {
		t.Fatalf("Reserve by another owner = %+v, %v; want refused", res, err)
	}
	if f, _ := inFile(t, s, "lease"); !f.LeaseUntil.Equal(renewed.Record.LeaseUntil) {
		t.Errorf("Reserve refused another owner on a renewal not yet in the file")
	}
}
