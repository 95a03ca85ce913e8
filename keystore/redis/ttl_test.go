package redis

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

func goredisZ(score float64, member string) goredis.Z { return goredis.Z{Score: score, Member: member} }

// TestTTLOnlyOnClosedRecords follows a record through every state with a
// closed-record TTL configured and checks the key's TTL at each step: none
// while open or pending, whatever Reserve and Resolve do to it, and the
// configured one once settled.
func TestTTLOnlyOnClosedRecords(t *testing.T) {
	const ttl = time.Hour
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(ttl))
	ctx := t.Context()
	// PTTL answers -1 for a key without expiry, -2 for a missing key, and
	// milliseconds otherwise; the raw reply avoids go-redis's mapping of
	// those codes to durations.
	pttl := func(st *Store, id string) int64 {
		t.Helper()
		n, err := c.Do(ctx, "PTTL", st.keysOf("ns", id).record).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	noTTL := func(step, id string) {
		t.Helper()
		if got := pttl(s, id); got != -1 {
			t.Errorf("%s: PTTL = %d; want -1 (no expiry): an unsettled record must never expire", step, got)
		}
	}
	for _, final := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
		id := "order-" + string(final)
		key := mustReserve(t, s, request("ns", id, "owner")).Record.Key
		noTTL("after Reserve", id)
		res := idempay.Resolution{Namespace: "ns", ID: id, Key: key, State: idempay.StateOpen}
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		noTTL("after Resolve releasing the lease", id)
		if got := mustReserve(t, s, request("ns", id, "owner-2")); !got.Claimed {
			t.Fatalf("claim of a released record = %+v", got)
		}
		noTTL("after a claim", id)
		res.State = idempay.StatePending
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		noTTL("after Resolve to pending", id)
		res.State = final
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		if got := pttl(s, id); got <= 0 || got > ttl.Milliseconds() {
			t.Errorf("after Resolve to %s: PTTL = %dms; want in (0, %d]", final, got, ttl.Milliseconds())
		}
		// A refused Resolve or Reserve of the settled record must not
		// touch its TTL (in particular not remove it).
		if err := s.Resolve(ctx, res); !errors.Is(err, idempay.ErrAlreadyResolved) {
			t.Fatalf("second Resolve = %v", err)
		}
		mustReserve(t, s, request("ns", id, "owner-3"))
		if got := pttl(s, id); got <= 0 {
			t.Errorf("settled record after refused Resolve and Reserve: PTTL = %d; want the TTL kept", got)
		}
	}
	plain := openStoreOn(t, c)
	settle(t, plain, "ns", "plain", idempay.StateSucceeded)
	if got := pttl(plain, "plain"); got != -1 {
		t.Errorf("settled record without WithClosedTTL: PTTL = %d; want -1 (no expiry)", got)
	}
}

// TestClosedRecordExpiresNatively lets Redis expire a settled record for
// real, with a TTL of a few milliseconds, and checks that an open record
// created at the same moment outlives it and the intent starts afresh.
func TestClosedRecordExpiresNatively(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(5*time.Millisecond))
	ctx := t.Context()
	mustReserve(t, s, request("ns", "open", "owner"))
	settle(t, s, "ns", "closed", idempay.StateSucceeded)
	// Redis's own clock decides, so poll rather than sleep a fixed time.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Load(ctx, "ns", "closed")
		if errors.Is(err, idempay.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("settled record with a 5ms TTL still loadable after 5s (Load = %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Load(ctx, "ns", "open"); err != nil {
		t.Errorf("open record after the settled one expired: Load = %v; want it kept", err)
	}
	if got := mustReserve(t, s, request("ns", "closed", "owner-2")); !got.Created {
		t.Errorf("Reserve after the TTL expired: Created=%v; want a new record", got.Created)
	}
}

// TestTTLTrimsSettledIndex checks that, with a TTL, settling a record drops
// the settled-index entries of records closed more than the TTL earlier
// (Redis has deleted them), so the index stays bounded when nobody calls
// Expire. The TTL runs from closing: a record created long before is kept.
func TestTTLTrimsSettledIndex(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(time.Hour))
	s.offset = -2 * time.Hour
	settle(t, s, "ns", "old", idempay.StateSucceeded)
	s.offset = -3 * time.Hour
	r := mustReserve(t, s, request("ns", "recent", "owner"))
	s.offset = -30 * time.Minute
	if err := s.Resolve(t.Context(), idempay.Resolution{Namespace: "ns", ID: "recent", Key: r.Record.Key,
		State: idempay.StateSucceeded}); err != nil {
		t.Fatal(err)
	}
	s.offset = 0
	settle(t, s, "ns", "now", idempay.StateSucceeded)
	got := c.ZRange(t.Context(), s.keysOf("ns", "").settled, 0, -1).Val()
	if len(got) != 2 || got[0] != "recent" || got[1] != "now" {
		t.Errorf("settled index after settling now with a 1h TTL = %v; want [recent now]: the entry closed 2h ago is trimmed, the one created 3h ago and closed 30m ago kept", got)
	}
}
