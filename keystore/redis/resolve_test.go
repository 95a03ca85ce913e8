package redis

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
)

// TestResolveStampsClosing checks Resolve's instants: UpdatedAt always,
// ClosedAt only when succeeded or failed, both from the server's clock;
// the lease released; a pending record kept pending by a release.
func TestResolveStampsClosing(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	r := mustReserve(t, s, request("ns", "order-1", "owner"))
	res := idempay.Resolution{Namespace: "ns", ID: "order-1", Key: r.Record.Key, State: idempay.StatePending,
		ProviderRef: "pi_1", Result: []byte("3ds")}
	if err := s.Resolve(ctx, res); err != nil {
		t.Fatal(err)
	}
	pending, _ := s.Load(ctx, "ns", "order-1")
	if pending.State != idempay.StatePending || !pending.ClosedAt.IsZero() || pending.LeaseOwner != "" ||
		!pending.LeaseUntil.IsZero() || pending.UpdatedAt.Before(r.Now) {
		t.Errorf("pending record = %+v; want pending, no ClosedAt, lease released, UpdatedAt from the server", pending)
	}
	mustReserve(t, s, request("ns", "order-1", "owner-2"))
	res.State, res.ProviderRef, res.Result = idempay.StateOpen, "", nil
	if err := s.Resolve(ctx, res); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.Load(ctx, "ns", "order-1"); rec.State != idempay.StatePending || rec.ProviderRef != "pi_1" || string(rec.Result) != "3ds" {
		t.Errorf("after a release = %+v; want still pending, ref and result kept", rec)
	}
	before := serverNow(t, c)
	res.State = idempay.StateSucceeded
	if err := s.Resolve(ctx, res); err != nil {
		t.Fatal(err)
	}
	after := serverNow(t, c)
	done, _ := s.Load(ctx, "ns", "order-1")
	if done.ClosedAt.Before(before) || done.ClosedAt.After(after) || !done.UpdatedAt.Equal(done.ClosedAt) {
		t.Errorf("closed record = %+v; want ClosedAt = UpdatedAt on the server's clock in [%v, %v]", done, before, after)
	}
	k := s.keysOf("ns", "order-1")
	if c.ZScore(ctx, k.settled, "order-1").Val() != float64(micros(done.ClosedAt)) || c.ZScore(ctx, k.open, "order-1").Err() == nil {
		t.Error("indexes after closing: want the intent in the settled index at ClosedAt and out of the open one")
	}
}

// TestResolveRefusals checks the errors in the contract's order, and that
// a refused Resolve changes nothing.
func TestResolveRefusals(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	r := mustReserve(t, s, request("ns", "order-1", "owner"))
	key := r.Record.Key
	cases := []struct {
		name string
		res  idempay.Resolution
		want error
	}{
		{"no record", idempay.Resolution{Namespace: "ns", ID: "nope", Key: key, State: idempay.StateFailed}, idempay.ErrNotFound},
		{"other key", idempay.Resolution{Namespace: "ns", ID: "order-1", Key: "other", State: idempay.StateFailed, LeaseOwner: "x"}, idempay.ErrKeyMismatch},
		{"other owner", idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key, State: idempay.StateOpen, LeaseOwner: "x"}, idempay.ErrLeaseLost},
	}
	for _, tc := range cases {
		if err := s.Resolve(ctx, tc.res); !errors.Is(err, tc.want) {
			t.Errorf("%s: Resolve = %v; want %v", tc.name, err, tc.want)
		}
	}
	if rec, _ := s.Load(ctx, "ns", "order-1"); !equalRecords(rec, r.Record) {
		t.Errorf("record after refused Resolves = %+v; want unchanged %+v", rec, r.Record)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key,
		State: idempay.StateFailed, LeaseOwner: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key,
		State: idempay.StateSucceeded, LeaseOwner: "x"}); !errors.Is(err, idempay.ErrAlreadyResolved) {
		t.Errorf("Resolve of a failed record = %v; want ErrAlreadyResolved before ErrLeaseLost", err)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key, State: "done"}); err == nil {
		t.Error("Resolve to an invalid state = nil error")
	}
}
