package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// Crashable is a store under test with a way to crash what holds it.
type Crashable struct {
	// Store is an empty store that no other subtest uses.
	Store idempay.KeyStore
	// Crash loses what the store's server may lose in a crash, and only
	// that: PostgreSQL stopped with -m immediate, a redis-server killed
	// with SIGKILL, a process killed without closing its file. It returns
	// a store on what survived (a new connection, the file opened again),
	// with the same table, prefix or path. It may fail the test.
	Crash func(t *testing.T) idempay.KeyStore
}

// RunDurability checks what a store claims about crashes: every write it
// must make durable (each Reserve; each Resolve with Durable, closing or
// releasing with a result) and that it acknowledged is there after Crash.
// A write the store refuses with an error acknowledged nothing, and the
// case is skipped saying so: a store may refuse what its server cannot
// make durable (the Redis store on appendfsync everysec without WAITAOF).
// Writes without Durable may be lost, and are not checked.
//
// open is called once per subtest; each subtest crashes its own store.
func RunDurability(t *testing.T, open func(t *testing.T) Crashable) {
	t.Helper()
	for _, c := range durabilityCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("rule: %s", c.rule)
				}
			})
			cs := open(t)
			if cs.Store == nil || cs.Crash == nil {
				t.Fatal("open returned no Store or no Crash")
			}
			c.run(t, cs)
		})
	}
}

type durabilityCase struct {
	name, rule string
	run        func(t *testing.T, cs Crashable)
}

// acknowledged skips the case when the store refused a write: it promised
// nothing.
func acknowledged(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Skipf("the store refused the %s (%v): it acknowledged nothing, so no durability to check", what, err)
	}
}

func durabilityCases() []durabilityCase {
	ctx := context.Background()
	req := func(id string) idempay.ReserveRequest {
		return idempay.ReserveRequest{Namespace: "durable", ID: id, Attempt: 1, Key: "key-" + id,
			Fingerprint: "fp-" + id, Owner: "owner-1", Lease: time.Minute}
	}
	load := func(t *testing.T, s idempay.KeyStore, id string) idempay.Record {
		t.Helper()
		rec, err := s.Load(ctx, "durable", id)
		if errors.Is(err, idempay.ErrNotFound) {
			t.Fatalf("after the crash the record of %q is gone: an acknowledged durable write was lost", id)
		}
		if err != nil {
			t.Fatalf("Load after the crash: %v", err)
		}
		return rec
	}
	return []durabilityCase{
		{
			name: "Durability/a Reserve survives a crash",
			rule: "the insert of a new key is durable before Reserve returns: lost after the first byte, the next charge would mint a second key",
			run: func(t *testing.T, cs Crashable) {
				_, err := cs.Store.Reserve(ctx, req("reserved"))
				acknowledged(t, "Reserve", err)
				rec := load(t, cs.Crash(t), "reserved")
				if rec.Key != "key-reserved" || rec.State != idempay.StateOpen {
					t.Errorf("after the crash: key %q state %s; want key-reserved, open", rec.Key, rec.State)
				}
			},
		},
		{
			name: "Durability/a renewal survives a crash",
			rule: "a renewed lease is durable before Reserve returns: lost, the lease would end earlier than its holder believes, and another flight could send beside it",
			run: func(t *testing.T, cs Crashable) {
				_, err := cs.Store.Reserve(ctx, req("renewed"))
				acknowledged(t, "Reserve", err)
				r := req("renewed")
				r.Lease = time.Hour
				res, err := cs.Store.Reserve(ctx, r)
				acknowledged(t, "renewal", err)
				if !res.Claimed {
					t.Fatal("the holder's renewal was not claimed")
				}
				rec := load(t, cs.Crash(t), "renewed")
				if rec.LeaseUntil.Before(res.Record.LeaseUntil.Add(-time.Microsecond)) || rec.LeaseOwner != "owner-1" {
					t.Errorf("after the crash: lease %s until %s; want owner-1 until %s", rec.LeaseOwner, rec.LeaseUntil, res.Record.LeaseUntil)
				}
			},
		},
		{
			name: "Durability/a durable failed close survives a crash",
			rule: "a Resolve with Durable is durable before it returns: a failure told to the caller, lost, reopens a key perhaps never sent, which a resume would send for the first time",
			run: func(t *testing.T, cs Crashable) {
				_, err := cs.Store.Reserve(ctx, req("failed"))
				acknowledged(t, "Reserve", err)
				err = cs.Store.Resolve(ctx, idempay.Resolution{Namespace: "durable", ID: "failed", Key: "key-failed",
					State: idempay.StateFailed, Result: []byte(`{"kind":"not_sent"}`), LeaseOwner: "owner-1", Durable: true})
				acknowledged(t, "durable Resolve", err)
				rec := load(t, cs.Crash(t), "failed")
				if rec.State != idempay.StateFailed || string(rec.Result) != `{"kind":"not_sent"}` {
					t.Errorf("after the crash: state %s result %s; want the failure", rec.State, rec.Result)
				}
			},
		},
		{
			name: "Durability/a durable release with a result survives a crash",
			rule: "a Resolve with Durable that keeps the record open and stores a result (the guard's \"do not run again\" lock) is durable before it returns",
			run: func(t *testing.T, cs Crashable) {
				_, err := cs.Store.Reserve(ctx, req("locked"))
				acknowledged(t, "Reserve", err)
				err = cs.Store.Resolve(ctx, idempay.Resolution{Namespace: "durable", ID: "locked", Key: "key-locked",
					State: idempay.StateOpen, Result: []byte(`{"lock":true}`), LeaseOwner: "owner-1", Durable: true})
				acknowledged(t, "durable release", err)
				rec := load(t, cs.Crash(t), "locked")
				if string(rec.Result) != `{"lock":true}` || rec.LeaseOwner != "" {
					t.Errorf("after the crash: result %s, lease %q; want the lock stored and the lease free", rec.Result, rec.LeaseOwner)
				}
			},
		},
	}
}
