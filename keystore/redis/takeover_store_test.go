package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestTakeoverBetweenInstances plays two instances of a service, each with
// its own connection pool, on one prefix: the second takes an intent over
// once the first's lease ran out on the server's clock, keeps the first's
// key, and keeps its lease against the first's late release and close.
func TestTakeoverBetweenInstances(t *testing.T) {
	c1, c2 := newClient(t, 0), newClient(t, 0)
	prefix := freshPrefix(t, c1)
	s1, err1 := New(c1, WithPrefix(prefix), WithLogger(nil), WithLossyServer())
	s2, err2 := New(c2, WithPrefix(prefix), WithLogger(nil), WithLossyServer())
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	a := request("ns", "order-1", "instance-1/flight")
	a.Lease = 50 * time.Millisecond
	first := mustReserve(t, s1, a)
	b := request("ns", "order-1", "instance-2/flight")
	if got := mustReserve(t, s2, b); got.Claimed {
		t.Fatalf("takeover while the lease runs = %+v; want refused", got)
	}
	time.Sleep(60 * time.Millisecond)
	got := mustReserve(t, s2, b)
	if !got.Claimed || got.Created || got.Record.Key != first.Record.Key {
		t.Fatalf("takeover after the lease = %+v; want Claimed, not Created, the first key", got)
	}
	key := first.Record.Key
	for _, st := range []idempay.State{idempay.StateOpen, idempay.StateFailed} {
		err := s1.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key, State: st, LeaseOwner: a.Owner})
		if !errors.Is(err, idempay.ErrLeaseLost) {
			t.Errorf("the first instance's late %s naming its owner = %v; want ErrLeaseLost", st, err)
		}
	}
	if rec, _ := s2.Load(ctx, "ns", "order-1"); rec.LeaseOwner != b.Owner || rec.State != idempay.StateOpen {
		t.Errorf("after the late writes: %+v; want open, leased to the second instance", rec)
	}
	if err := s2.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: key,
		State: idempay.StateSucceeded, LeaseOwner: b.Owner, Durable: true}); err != nil {
		t.Errorf("the new holder's close = %v", err)
	}
}

// TestTenancyOneIntentTwoAccounts charges one intent ID for two merchant
// accounts: two records, two keys, listed and expired apart.
func TestTenancyOneIntentTwoAccounts(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	a := mustReserve(t, s, request("stripe:acct_A", "order-1", "owner"))
	b := mustReserve(t, s, request("stripe:acct_B", "order-1", "owner-b"))
	if !a.Created || !b.Created || a.Record.Key == b.Record.Key {
		t.Fatalf("one intent ID in two namespaces: %+v, %+v; want two new records with their own keys", a, b)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "stripe:acct_A", ID: "order-1", Key: a.Record.Key,
		State: idempay.StateSucceeded}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ListOpen(ctx, "stripe:acct_B", idempay.Cursor{}, 10); len(got) != 1 || got[0].Key != b.Record.Key {
		t.Errorf("ListOpen(acct_B) = %v; want its own open record", ids(got))
	}
	s.offset = time.Minute
	if n, err := s.Expire(ctx, time.Second); err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want acct_A's settled record only", n, err)
	}
	if _, err := s.Load(ctx, "stripe:acct_B", "order-1"); err != nil {
		t.Errorf("acct_B's open record after Expire: %v", err)
	}
}

// TestClaimOnRedis runs the Claim protocol on the store: the heartbeat
// keeps a 300ms lease for a second on the server's clock, another flight
// is refused meanwhile, and a durable close settles the record.
func TestClaimOnRedis(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	cfg := idempay.ClaimConfig{Store: s, Lease: idempay.MinLease, Durable: true}
	req := idempay.ReserveRequest{Namespace: "ns", ID: "order-1", Attempt: 1, Key: "key-1", Fingerprint: "fp"}
	cl, res, err := cfg.Reserve(t.Context(), req)
	if err != nil || cl == nil || !res.Created {
		t.Fatalf("Reserve = %v, %+v, %v; want a claim on a new key", cl, res, err)
	}
	time.Sleep(time.Second)
	if !cl.Held() {
		t.Fatalf("claim after 1s with a %v lease: not held (%v)", idempay.MinLease, context.Cause(cl.Context()))
	}
	if other, _, err := cfg.Reserve(t.Context(), req); err != nil || other != nil {
		t.Errorf("second flight's Reserve = %v, %v; want refused", other, err)
	}
	if err := cl.Close(t.Context(), idempay.StateSucceeded, "ch_1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.Load(t.Context(), "ns", "order-1"); rec.State != idempay.StateSucceeded || rec.ClosedAt.IsZero() {
		t.Errorf("record after Close = %+v; want succeeded with ClosedAt", rec)
	}
}
