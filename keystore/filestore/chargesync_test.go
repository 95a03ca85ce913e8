package filestore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

// TestLoneChargeCostsOneCommit: a lone caller's charge must cost one
// synced commit, its reservation's, and no more: the ledger's charge facts
// and the record's close ride, unsynced, on the next charge's commit (the
// store keeps its writes in order, so they can only be lost together with
// the close, which reopens the record for a resume). The batch delay is
// set far beyond the test so that no timer commits behind its back.
func TestLoneChargeCostsOneCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: s, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	const charges = 20
	before := s.w.commits.Load()
	for i := range charges {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("lone-%d", i),
			Amount: 1500, Currency: "JPY", Source: "tokn_lone"})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.commits.Load() - before; n > charges {
		t.Errorf("%d lone charges made %d synced commits; want at most one each", charges, n)
	}
	for i := range charges {
		led, err := c.Ledger(context.Background(), fmt.Sprintf("lone-%d", i))
		if err != nil || led.Amount != 1500 {
			t.Fatalf("ledger of lone-%d: %+v, %v; want the charge's facts", i, led, err)
		}
	}
}

// TestKilledBeforeTheTailSyncsResumes: a process killed after a charge was
// answered but before its unsynced tail (the ledger's facts, the close)
// reached a commit loses the tail whole, never the facts alone: the record
// is open again, and the resumed charge is answered by the provider's
// replay, charged once, with the facts in the ledger.
func TestKilledBeforeTheTailSyncsResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := Open(path, WithSweepInterval(0), WithMaxBatchDelay(time.Hour), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	srv, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client := func(s *Store) *idempay.Client {
		c, err := idempay.New(idempay.Config{BaseURL: url, Store: s, HTTPClient: &http.Client{}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	req := idempay.ChargeRequest{IntentID: "killed", Amount: 1500, Currency: "JPY", Source: "tokn_killed"}
	if _, err := client(s).Charge(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	kill(s)
	if s, err = Open(path, WithSweepInterval(0), WithLogger(nil)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Load(context.Background(), "ownapi:default", "killed")
	if err != nil {
		t.Fatal(err)
	}
	led, lerr := s.Load(context.Background(), "ownapi:default/ledger", "killed")
	if rec.State.Closed() && lerr != nil {
		t.Fatalf("the close survived the kill without the ledger's facts: %v", lerr)
	}
	if rec.State != idempay.StateOpen || lerr == nil && led.Result != nil {
		t.Fatalf("record %s, ledger %q; want the unsynced tail lost whole (the batch delay never ran)", rec.State, led.Result)
	}
	c := client(s)
	// The killed flight's lease is voided at Open: the resume may send.
	if _, err := c.Charge(context.Background(), req); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if n := srv.Ledger().Count("killed"); n != 1 {
		t.Fatalf("charged %d times; want once", n)
	}
	if l, err := c.Ledger(context.Background(), "killed"); err != nil || l.Amount != 1500 {
		t.Fatalf("ledger after the resume: %+v, %v", l, err)
	}
}

// TestAbsentKeyReadOnce: a charge asks the store for its intent's ledger
// three times before it writes it (is the intent charged before, does the
// ledger hold the facts, claim it); a key found absent from the file must
// not cost a read of the file each time, and must be found once written,
// checkpointed or not.
func TestAbsentKeyReadOnce(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Load(ctx, "n/ledger", "a"); !errors.Is(err, idempay.ErrNotFound) {
		t.Fatalf("Load = %v; want ErrNotFound", err)
	}
	before := s.db.Stats().TxN
	if _, err := s.Load(ctx, "n/ledger", "a"); !errors.Is(err, idempay.ErrNotFound) {
		t.Fatalf("Load = %v; want ErrNotFound", err)
	}
	if n := s.db.Stats().TxN - before; n != 0 {
		t.Errorf("a key found absent was read from the file again (%d read transactions)", n)
	}
	r := idempay.ReserveRequest{Namespace: "n/ledger", ID: "a", Attempt: 1, Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute}
	if res, err := s.Reserve(ctx, r); err != nil || !res.Created {
		t.Fatalf("Reserve = %+v, %v; want the record created", res, err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "n/ledger", "a"); err != nil {
		t.Fatalf("Load after the write was checkpointed: %v", err)
	}
}

// TestKeyedChargeCostsOneCommit: a charge with the caller's own key also
// writes the key's owner before its reservation. On this store that write
// needs no sync of its own: the key is sent only under a reservation,
// which is synced after it and so carries it. A kill right after the charge
// keeps the key's owner.
func TestKeyedChargeCostsOneCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := Open(path, WithSweepInterval(0), WithMaxBatchDelay(time.Hour), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c, err := idempay.New(idempay.Config{BaseURL: url, Store: s, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	const charges = 20
	before := s.w.commits.Load()
	for i := range charges {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("keyed-%d", i),
			Amount: 1500, Currency: "JPY", Source: "tokn_keyed", Key: fmt.Sprintf("caller-key-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.commits.Load() - before; n > charges {
		t.Errorf("%d keyed charges made %d synced commits; want at most one each", charges, n)
	}
	kill(s)
	if s, err = Open(path, WithSweepInterval(0), WithLogger(nil)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range charges {
		if _, err := s.Load(context.Background(), "ownapi:default/key", fmt.Sprintf("caller-key-%d", i)); err != nil {
			t.Errorf("the owner of caller-key-%d after a kill: %v", i, err)
		}
	}
}
