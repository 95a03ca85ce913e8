package redis

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

// oldRecord is a record as the store wrote it before contract v2: no
// attempt, creator, closing time or history, instants from a client's
// clock to the nanosecond, indexed in :open or :closed by CreatedAt.
type oldRecord struct {
	id, state, leaseOwner, providerRef string
	created, updated, leaseUntil       time.Time
	result                             []byte
}

// writeOld writes r in namespace "ns" of s exactly as the old scripts left
// it: the hash, its index entry scored by CreatedAt in µs, and the
// namespace registered.
func writeOld(t *testing.T, c *goredis.Client, s *Store, r oldRecord) {
	t.Helper()
	enc := func(tm time.Time) string {
		v, err := encodeTime(tm)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	k := s.keysOf("ns", r.id)
	fields := []any{"ns", "ns", "id", r.id, "k", "key-" + r.id, "fp", "fp-" + r.id, "st", r.state,
		"ca", enc(r.created), "ua", enc(r.updated), "lo", r.leaseOwner, "lu", enc(r.leaseUntil), "pr", r.providerRef}
	if r.result != nil {
		fields = append(fields, "res", r.result)
	}
	ctx := t.Context()
	idx := k.open
	if r.state == "succeeded" || r.state == "failed" {
		idx = k.legacy
	}
	if _, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, k.record, fields...)
		p.ZAdd(ctx, idx, goredis.Z{Score: float64(r.created.UnixMicro()), Member: r.id})
		p.SAdd(ctx, s.namespacesKey(), "ns")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOldLayoutReads checks that old records load with the contract's
// defaults: attempt 1, no creator, no history, ClosedAt = UpdatedAt when
// closed (the closing Resolve wrote it last), instants at the microsecond.
func TestOldLayoutReads(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	now := serverNow(t, c)
	created, closed := now.Add(-time.Hour+123*time.Nanosecond), now.Add(-time.Minute+456*time.Nanosecond)
	writeOld(t, c, s, oldRecord{id: "open", state: "open", created: created, updated: created,
		leaseOwner: "old-owner", leaseUntil: created.Add(time.Minute)})
	writeOld(t, c, s, oldRecord{id: "done", state: "succeeded", created: created, updated: closed,
		providerRef: "ch_1", result: []byte("ok")})

	open, err := s.Load(t.Context(), "ns", "open")
	if err != nil || open.Attempt != 1 || open.Creator != "" || open.History != nil || !open.ClosedAt.IsZero() ||
		!open.CreatedAt.Equal(created.Truncate(time.Microsecond)) || open.LeaseOwner != "old-owner" {
		t.Errorf("old open record = %+v, %v; want attempt 1, no creator, no ClosedAt, CreatedAt at the µs", open, err)
	}
	done, err := s.Load(t.Context(), "ns", "done")
	if err != nil || done.Attempt != 1 || !done.ClosedAt.Equal(closed.Truncate(time.Microsecond)) ||
		string(done.Result) != "ok" || done.ProviderRef != "ch_1" {
		t.Errorf("old succeeded record = %+v, %v; want attempt 1, ClosedAt = its UpdatedAt", done, err)
	}
	if got, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 10); err != nil || len(got) != 1 || got[0].ID != "open" {
		t.Errorf("ListOpen = %v, %v; want the old open record", ids(got), err)
	}
}

// TestOldLayoutClaimAndClose claims old open records (a lease over on the
// server's clock, to the nanosecond, and one still held) and settles one:
// it gets a closing time and moves to the settled index.
func TestOldLayoutClaimAndClose(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	now := serverNow(t, c)
	writeOld(t, c, s, oldRecord{id: "stale", state: "open", created: now.Add(-time.Hour), updated: now.Add(-time.Hour),
		leaseOwner: "dead", leaseUntil: now.Add(-time.Minute + 1)})
	writeOld(t, c, s, oldRecord{id: "held", state: "pending", created: now, updated: now,
		leaseOwner: "alive", leaseUntil: now.Add(time.Hour + 1)})

	if got := mustReserve(t, s, request("ns", "held", "new")); got.Claimed || got.Created {
		t.Errorf("old record leased for another hour = %+v; want a read", got)
	}
	got := mustReserve(t, s, request("ns", "stale", "new"))
	if !got.Claimed || got.Created || got.Record.Key != "key-stale" || got.Record.Attempt != 1 {
		t.Fatalf("old record whose lease ran out = %+v; want Claimed (not Created), its key kept", got)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "stale", Key: "key-stale",
		State: idempay.StateSucceeded, LeaseOwner: "new"}); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Load(ctx, "ns", "stale")
	k := s.keysOf("ns", "stale")
	if rec.ClosedAt.IsZero() || !rec.ClosedAt.Equal(rec.UpdatedAt) ||
		c.ZScore(ctx, k.settled, "stale").Val() != float64(micros(rec.ClosedAt)) || c.ZScore(ctx, k.open, "stale").Err() == nil {
		t.Errorf("old record settled now = %+v; want ClosedAt stamped and the intent in the settled index only", rec)
	}
}

// TestOldLayoutNewAttempt begins attempt 2 over an old failed record: the
// old attempt goes to History with its closing time (its UpdatedAt) and
// result, and out of the old closed index.
func TestOldLayoutNewAttempt(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	ctx := t.Context()
	now := serverNow(t, c)
	created, closed := now.Add(-2*time.Hour), now.Add(-time.Hour+999)
	writeOld(t, c, s, oldRecord{id: "declined", state: "failed", created: created, updated: closed,
		result: []byte(`{"kind":"declined"}`)})
	r := request("ns", "declined", "owner")
	r.Attempt, r.Key, r.Fingerprint = 2, "key-2", "fp-2"
	got := mustReserve(t, s, r)
	want := idempay.PastAttempt{Attempt: 1, Key: "key-declined", Fingerprint: "fp-declined", State: idempay.StateFailed,
		CreatedAt: created.Truncate(time.Microsecond), ClosedAt: closed.Truncate(time.Microsecond), Result: []byte(`{"kind":"declined"}`)}
	if !got.Created || got.Record.Attempt != 2 || len(got.Record.History) != 1 || !equalPast(got.Record.History[0], want) {
		t.Errorf("attempt 2 over an old failed record = %+v; want Created, History [%+v]", got, want)
	}
	if n := c.ZCard(ctx, s.keysOf("ns", "").legacy).Val(); n != 0 {
		t.Errorf("old closed index holds %d entries; want the reopened intent dropped", n)
	}
}

// TestOldLayoutExpireByClosing expires old settled records by their
// closing time (UpdatedAt), not by the CreatedAt their old index entry is
// scored with: one created ten days ago and closed an hour ago stays.
func TestOldLayoutExpireByClosing(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithExpireBatch(2))
	ctx := t.Context()
	now := serverNow(t, c)
	old := now.Add(-240 * time.Hour)
	writeOld(t, c, s, oldRecord{id: "settled-late", state: "succeeded", created: old, updated: now.Add(-time.Hour)})
	writeOld(t, c, s, oldRecord{id: "settled-early", state: "failed", created: old, updated: now.Add(-72 * time.Hour)})
	writeOld(t, c, s, oldRecord{id: "settled-early-2", state: "failed", created: old, updated: now.Add(-71 * time.Hour)})
	writeOld(t, c, s, oldRecord{id: "still-open", state: "open", created: old, updated: old})

	n, err := s.Expire(ctx, 48*time.Hour)
	if err != nil || n != 2 {
		t.Errorf("Expire(48h) = %d, %v; want the 2 records closed 3 days ago", n, err)
	}
	if _, err := s.Load(ctx, "ns", "settled-late"); err != nil {
		t.Errorf("record created 10 days ago, closed an hour ago: Load = %v; want it kept", err)
	}
	if _, err := s.Load(ctx, "ns", "settled-early"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("record closed 3 days ago: Load = %v; want it deleted", err)
	}
	if _, err := s.Load(ctx, "ns", "still-open"); err != nil {
		t.Errorf("old open record: Load = %v; want it kept", err)
	}
	k := s.keysOf("ns", "")
	if c.ZCard(ctx, k.legacy).Val() != 0 || c.ZScore(ctx, k.settled, "settled-late").Val() != float64(now.Add(-time.Hour).UnixMicro()) {
		t.Error("after Expire: want the old closed index empty and its survivor in the settled index at its closing time")
	}
}
