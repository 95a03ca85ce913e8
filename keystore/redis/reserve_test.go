package redis

import (
	"bytes"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// TestReserveInsertsOnTheServersClock checks the insert: Created and
// Claimed, every instant the server's TIME, the lease Now + Lease, the
// creator and the attempt stored.
func TestReserveInsertsOnTheServersClock(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	before := serverNow(t, c)
	got := mustReserve(t, s, request("ns", "order-1", "owner-a"))
	after := serverNow(t, c)
	r := got.Record
	switch {
	case !got.Created || !got.Claimed:
		t.Errorf("insert: Created=%v Claimed=%v; want both", got.Created, got.Claimed)
	case got.Now.Before(before) || got.Now.After(after):
		t.Errorf("Now = %v; want the server's clock, within [%v, %v]", got.Now, before, after)
	case !r.CreatedAt.Equal(got.Now) || !r.UpdatedAt.Equal(got.Now):
		t.Errorf("CreatedAt %v, UpdatedAt %v; want Now %v", r.CreatedAt, r.UpdatedAt, got.Now)
	case !r.LeaseUntil.Equal(got.Now.Add(time.Minute)):
		t.Errorf("LeaseUntil = %v; want Now + 1m = %v", r.LeaseUntil, got.Now.Add(time.Minute))
	case r.Creator != "owner-a" || r.LeaseOwner != "owner-a" || r.Attempt != 1 || r.State != idempay.StateOpen:
		t.Errorf("record = %+v; want attempt 1, open, created and leased by owner-a", r)
	case !r.ClosedAt.IsZero() || r.History != nil || r.Result != nil:
		t.Errorf("record = %+v; want no ClosedAt, History or Result", r)
	}
	if loaded, err := s.Load(t.Context(), "ns", "order-1"); err != nil || !equalRecords(loaded, r) {
		t.Errorf("Load = %+v, %v; want %+v", loaded, err, r)
	}
}

// TestReserveClaimRules walks the claim rules: another owner is refused
// while the lease runs, another fingerprint always, the holder renews (and,
// as the creator, still hears Created), and anyone claims once the lease is
// over on the server's clock.
func TestReserveClaimRules(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	first := mustReserve(t, s, request("ns", "order-1", "owner-a"))

	b := request("ns", "order-1", "owner-b")
	if got := mustReserve(t, s, b); got.Created || got.Claimed || got.Record.LeaseOwner != "owner-a" {
		t.Errorf("owner-b while owner-a holds the lease: %+v; want a read", got)
	}
	other := request("ns", "order-1", "owner-a")
	other.Fingerprint = "fp-other"
	if got := mustReserve(t, s, other); got.Claimed {
		t.Errorf("other fingerprint: Claimed; want a read")
	}
	renew := request("ns", "order-1", "owner-a")
	renew.Lease = 2 * time.Minute
	got := mustReserve(t, s, renew)
	if !got.Claimed || !got.Created || !got.Record.LeaseUntil.Equal(got.Now.Add(2*time.Minute)) ||
		!got.Record.UpdatedAt.Equal(got.Now) || !got.Record.CreatedAt.Equal(first.Record.CreatedAt) {
		t.Errorf("renewal by the creator = %+v; want Claimed and Created, lease and UpdatedAt from Now, CreatedAt kept", got)
	}

	s.offset = 2*time.Minute + time.Millisecond // the lease is over on the server's clock
	got = mustReserve(t, s, b)
	if !got.Claimed || got.Created || got.Record.LeaseOwner != "owner-b" || got.Record.Key != first.Record.Key {
		t.Errorf("owner-b after the lease ran out = %+v; want Claimed, not Created, the first key kept", got)
	}
}

// TestReserveLeaseOverAtLeaseUntil checks that a lease is free from
// LeaseUntil on, as Record.ClaimableBy says.
func TestReserveLeaseOverAtLeaseUntil(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	r := request("ns", "order-1", "owner-a")
	r.Lease = 30 * time.Millisecond
	mustReserve(t, s, r)
	time.Sleep(40 * time.Millisecond)
	if got := mustReserve(t, s, request("ns", "order-1", "owner-b")); !got.Claimed {
		t.Errorf("claim after the lease ran out on the server = %+v; want Claimed", got)
	}
}

// TestReserveBeginsAttemptAfterFailure checks a new attempt over a failed
// record: only with attempt+1, the failed attempt kept in History (its
// result byte for byte), the record open, new, leased, without TTL, in the
// open index and out of the settled one.
func TestReserveBeginsAttemptAfterFailure(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(time.Hour))
	ctx := t.Context()
	first := mustReserve(t, s, request("ns", "order-1", "owner-a"))
	result := []byte{0, 0xff, '"', '\\', 0x80, 'x'} // not UTF-8, not JSON-safe
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "order-1", Key: first.Record.Key,
		State: idempay.StateFailed, ProviderRef: "ch_1", Result: result}); err != nil {
		t.Fatal(err)
	}
	failed, _ := s.Load(ctx, "ns", "order-1")

	for _, n := range []int{1, 3} {
		r := request("ns", "order-1", "owner-b")
		r.Attempt = n
		if got := mustReserve(t, s, r); got.Claimed || got.Created {
			t.Errorf("attempt %d over failed attempt 1 = %+v; want a read", n, got)
		}
	}
	r := request("ns", "order-1", "owner-b")
	r.Attempt, r.Key, r.Fingerprint = 2, "key-2", "fp-2"
	got := mustReserve(t, s, r)
	rec := got.Record
	want := idempay.PastAttempt{Attempt: 1, Key: first.Record.Key, Fingerprint: "fp-order-1", State: idempay.StateFailed,
		CreatedAt: first.Record.CreatedAt, ClosedAt: failed.ClosedAt, ProviderRef: "ch_1", Result: result}
	switch {
	case !got.Created || !got.Claimed:
		t.Errorf("attempt 2: Created=%v Claimed=%v; want both", got.Created, got.Claimed)
	case rec.Attempt != 2 || rec.Key != "key-2" || rec.Fingerprint != "fp-2" || rec.State != idempay.StateOpen ||
		rec.Creator != "owner-b" || rec.ProviderRef != "" || rec.Result != nil || !rec.ClosedAt.IsZero() ||
		!rec.CreatedAt.Equal(got.Now):
		t.Errorf("attempt 2 record = %+v; want a fresh open attempt by owner-b", rec)
	case len(rec.History) != 1 || !equalPast(rec.History[0], want):
		t.Errorf("History = %+v; want [%+v]", rec.History, want)
	}
	k := s.keysOf("ns", "order-1")
	if ttl := c.PTTL(ctx, k.record).Val(); ttl != -1 {
		t.Errorf("PTTL after a new attempt = %v; want none: an open record never expires", ttl)
	}
	if c.ZScore(ctx, k.settled, "order-1").Err() != goredis.Nil || c.ZScore(ctx, k.open, "order-1").Val() != float64(micros(got.Now)) {
		t.Error("indexes after a new attempt: want the intent in the open index at CreatedAt, not in the settled one")
	}
}

// TestReserveRepeatedAfterLostReply is issue 8 item 11a: the reply to a
// Reserve's script is lost on the network after the server ran it, and
// go-redis sends the script again on a new connection. The second run
// finds the record the first one inserted; before the creator was stored
// it answered Created=false, so a definite refusal of the charge later was
// reported as unknown. The proxy really drops the connection.
func TestReserveRepeatedAfterLostReply(t *testing.T) {
	direct := newClient(t, 0)
	p := newLossyProxy(t, testenv.RedisAddr())
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(c, WithPrefix(freshPrefix(t, direct)), WithLogger(nil), WithLossyServer())
	if err != nil {
		t.Fatal(err)
	}
	mustReserve(t, s, request("ns", "warm-up", "owner-a")) // scripts cached, settings read

	p.loseReplyTo("lost-reply-intent")
	got := mustReserve(t, s, request("ns", "lost-reply-intent", "owner-a"))
	if p.dropped.Load() != 1 {
		t.Fatalf("the proxy lost %d replies; want 1", p.dropped.Load())
	}
	if !got.Created || !got.Claimed {
		t.Errorf("Reserve whose first reply was lost: Created=%v Claimed=%v; want both: the key is this call's", got.Created, got.Claimed)
	}
	// Another owner with the same key is not the creator.
	other := request("ns", "lost-reply-intent", "owner-b")
	other.Key = got.Record.Key
	s.offset = 2 * time.Minute
	if res := mustReserve(t, s, other); res.Created || !res.Claimed {
		t.Errorf("another owner's claim with the same key: Created=%v Claimed=%v; want Claimed only", res.Created, res.Claimed)
	}
}

// TestReserveRefusesBadRequests checks that what CheckReserveRequest
// refuses, and a lease the store cannot hold, writes nothing.
func TestReserveRefusesBadRequests(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	bad := map[string]func(*idempay.ReserveRequest){
		"no owner":   func(r *idempay.ReserveRequest) { r.Owner = "" },
		"attempt 0":  func(r *idempay.ReserveRequest) { r.Attempt = 0 },
		"no lease":   func(r *idempay.ReserveRequest) { r.Lease = 0 },
		"huge lease": func(r *idempay.ReserveRequest) { r.Lease = 200 * 365 * 24 * time.Hour },
	}
	for name, f := range bad {
		r := request("ns", "order-1", "owner")
		f(&r)
		if _, err := s.Reserve(t.Context(), r); err == nil {
			t.Errorf("%s: Reserve = nil error; want it refused", name)
		}
	}
	if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load after refused requests = %v; want ErrNotFound", err)
	}
}

func equalPast(a, b idempay.PastAttempt) bool {
	return a.Attempt == b.Attempt && a.Key == b.Key && a.Fingerprint == b.Fingerprint && a.State == b.State &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ClosedAt.Equal(b.ClosedAt) && a.ProviderRef == b.ProviderRef &&
		bytes.Equal(a.Result, b.Result)
}

func equalRecords(a, b idempay.Record) bool {
	if len(a.History) != len(b.History) {
		return false
	}
	for i := range a.History {
		if !equalPast(a.History[i], b.History[i]) {
			return false
		}
	}
	return a.Namespace == b.Namespace && a.ID == b.ID && a.Attempt == b.Attempt && a.Key == b.Key &&
		a.Fingerprint == b.Fingerprint && a.State == b.State && a.CreatedAt.Equal(b.CreatedAt) &&
		a.UpdatedAt.Equal(b.UpdatedAt) && a.ClosedAt.Equal(b.ClosedAt) && a.Creator == b.Creator &&
		a.LeaseOwner == b.LeaseOwner && a.LeaseUntil.Equal(b.LeaseUntil) && a.ProviderRef == b.ProviderRef &&
		bytes.Equal(a.Result, b.Result)
}
