package redis

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestTTLOnlyOnClosedRecords follows records through every state with a
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
	pttl := func(st *Store, r idempay.Record) int64 {
		t.Helper()
		n, err := c.Do(ctx, "PTTL", st.keysOf(r.Namespace, r.IntentID).record).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	noTTL := func(step string, r idempay.Record) {
		t.Helper()
		if got := pttl(s, r); got != -1 {
			t.Errorf("%s: PTTL = %d; want -1 (no expiry): an unsettled record must never expire", step, got)
		}
	}
	for _, final := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
		r := record("ns", "order-"+string(final))
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		noTTL("after Reserve", r)

		res := idempay.Resolution{Namespace: r.Namespace, IntentID: r.IntentID, Key: r.Key, At: at.Add(time.Second)}
		res.State = idempay.StateOpen
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		noTTL("after Resolve releasing the lease", r)

		other := r
		other.LeaseOwner, other.UpdatedAt = "owner-2", at.Add(2*time.Second)
		if got, err := s.Reserve(ctx, other); err != nil || !got.Claimed {
			t.Fatalf("claim of a released record = %+v, %v", got, err)
		}
		noTTL("after a claim", r)

		res.State, res.At = idempay.StatePending, at.Add(3*time.Second)
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		noTTL("after Resolve to pending", r)

		res.State, res.At = final, at.Add(4*time.Second)
		if err := s.Resolve(ctx, res); err != nil {
			t.Fatal(err)
		}
		if got := pttl(s, r); got <= 0 || got > ttl.Milliseconds() {
			t.Errorf("after Resolve to %s: PTTL = %dms; want in (0, %d]", final, got, ttl.Milliseconds())
		}

		// A refused Resolve or Reserve of the settled record must not
		// touch its TTL (in particular not remove it).
		if err := s.Resolve(ctx, res); !errors.Is(err, idempay.ErrAlreadyResolved) {
			t.Fatalf("second Resolve = %v", err)
		}
		if _, err := s.Reserve(ctx, other); err != nil {
			t.Fatal(err)
		}
		if got := pttl(s, r); got <= 0 {
			t.Errorf("settled record after refused Resolve and Reserve: PTTL = %d; want the TTL kept", got)
		}
	}

	// Without the option nothing expires, settled or not.
	plain := openStoreOn(t, c)
	r := record("ns", "plain")
	if _, err := plain.Reserve(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := plain.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: "plain", Key: r.Key,
		State: idempay.StateSucceeded, At: at}); err != nil {
		t.Fatal(err)
	}
	if got := pttl(plain, r); got != -1 {
		t.Errorf("settled record without WithClosedTTL: PTTL = %d; want -1 (no expiry)", got)
	}
}

// TestClosedRecordExpiresNatively lets Redis expire a settled record for
// real, with a TTL of a few milliseconds, and checks that an open record
// created at the same moment outlives it.
func TestClosedRecordExpiresNatively(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(5*time.Millisecond))
	ctx := t.Context()
	closed, open := record("ns", "closed"), record("ns", "open")
	for _, r := range []idempay.Record{closed, open} {
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: "closed", Key: closed.Key,
		State: idempay.StateSucceeded, At: at}); err != nil {
		t.Fatal(err)
	}
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
	// The intent of the expired record starts afresh.
	again := closed
	again.Key = "key-new"
	if got, err := s.Reserve(ctx, again); err != nil || !got.Created {
		t.Errorf("Reserve after the TTL expired: Created=%v, %v; want a new record", got.Created, err)
	}
}

// TestTTLTrimsClosedIndex checks that, with a TTL, settling a record drops
// the closed-index entries of records created more than the TTL earlier,
// so the index stays bounded when nobody calls Expire.
func TestTTLTrimsClosedIndex(t *testing.T) {
	const ttl = time.Hour
	c := newClient(t, 0)
	s := openStoreOn(t, c, WithClosedTTL(ttl))
	ctx := t.Context()
	settle := func(id string, created, closed time.Time) {
		t.Helper()
		r := record("ns", id)
		r.CreatedAt = created
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", IntentID: id, Key: r.Key,
			State: idempay.StateSucceeded, At: closed}); err != nil {
			t.Fatal(err)
		}
	}
	settle("old", at, at.Add(time.Minute))
	settle("recent", at.Add(90*time.Minute), at.Add(90*time.Minute))
	settle("now", at.Add(2*time.Hour), at.Add(2*time.Hour))

	got := c.ZRange(ctx, s.keysOf("ns", "").closed, 0, -1).Val()
	if len(got) != 2 || got[0] != "recent" || got[1] != "now" {
		t.Errorf("closed index after settling at +2h with a 1h TTL = %v; want [recent now]: the entry created 2h earlier is trimmed", got)
	}
}
