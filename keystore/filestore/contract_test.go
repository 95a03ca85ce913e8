package filestore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/filestore"
)

// These tests state the KeyStore contract v2 for this store until the
// conformance suite (keystore/storetest) states it for every store.

func TestReserveInsertsOnTheStoreClock(t *testing.T) {
	s, c := openClocked(t)
	c.Advance(1500 * time.Nanosecond) // kept to the microsecond
	res := mustReserve(t, s, req("ns", "a", "k", "o"))
	now := t0.Add(time.Microsecond)
	r := res.Record
	switch {
	case !res.Created || !res.Claimed || !res.Now.Equal(now):
		t.Errorf("Reserve = created %v, claimed %v, now %v; want created, claimed, now %v", res.Created, res.Claimed, res.Now, now)
	case r.Attempt != 1 || r.Key != "k" || r.Fingerprint != "fp" || r.State != idempay.StateOpen || r.Creator != "o":
		t.Errorf("record = %+v; want attempt 1, key k, fp, open, creator o", r)
	case !r.CreatedAt.Equal(now) || !r.UpdatedAt.Equal(now) || !r.ClosedAt.IsZero():
		t.Errorf("record times = created %v, updated %v, closed %v; want %v, %v, zero", r.CreatedAt, r.UpdatedAt, r.ClosedAt, now, now)
	case r.LeaseOwner != "o" || !r.LeaseUntil.Equal(now.Add(time.Minute)):
		t.Errorf("lease = %q until %v; want o until %v", r.LeaseOwner, r.LeaseUntil, now.Add(time.Minute))
	}
	if got, err := s.Load(t.Context(), "ns", "a"); err != nil || !got.CreatedAt.Equal(now) || got.Creator != "o" {
		t.Errorf("Load = %+v, %v; want the reserved record", got, err)
	}
}

func TestReserveClaims(t *testing.T) {
	s, c := openClocked(t)
	first := mustReserve(t, s, req("ns", "a", "k", "o1"))
	other := req("ns", "a", "k2", "o2")
	if res := mustReserve(t, s, other); res.Claimed || res.Created || res.Record.LeaseOwner != "o1" {
		t.Errorf("Reserve by another owner while leased = %+v; want neither claimed nor created", res)
	}
	// Renewal by the holder: claimed, and still created (its key).
	c.Advance(10 * time.Second)
	renew := mustReserve(t, s, req("ns", "a", "k", "o1"))
	if !renew.Claimed || !renew.Created || !renew.Record.LeaseUntil.Equal(t0.Add(70*time.Second)) || !renew.Record.UpdatedAt.Equal(t0.Add(10*time.Second)) {
		t.Errorf("renewal = %+v; want claimed, created, lease to t0+70s", renew)
	}
	// Free from LeaseUntil on.
	c.Advance(60 * time.Second)
	res := mustReserve(t, s, other)
	if !res.Claimed || res.Created || res.Record.LeaseOwner != "o2" || res.Record.Key != first.Record.Key {
		t.Errorf("Reserve at LeaseUntil = %+v; want claimed with the stored key, not created", res)
	}
	// Another fingerprint never claims, even with the lease over.
	c.Advance(time.Hour)
	fp := other
	fp.Fingerprint = "other"
	if res := mustReserve(t, s, fp); res.Claimed || res.Record.Fingerprint != "fp" {
		t.Errorf("Reserve with another fingerprint = %+v; want nothing changed", res)
	}
	// Closed: nothing changes, even for the creator.
	mustResolve(t, s, closeWith(res.Record, idempay.StateSucceeded))
	if res := mustReserve(t, s, req("ns", "a", "k", "o1")); res.Claimed || res.Created || res.Record.State != idempay.StateSucceeded {
		t.Errorf("Reserve of a succeeded intent = %+v; want nothing changed", res)
	}
}

func TestReserveBeginsAnAttemptOverAFailedOne(t *testing.T) {
	s, c := openClocked(t)
	first := mustReserve(t, s, req("ns", "a", "k1", "o")).Record
	c.Advance(time.Minute)
	res := closeWith(first, idempay.StateFailed)
	res.ProviderRef, res.Result = "ch_1", []byte("declined")
	mustResolve(t, s, res)
	failed, _ := s.Load(t.Context(), "ns", "a")

	c.Advance(time.Minute)
	again := req("ns", "a", "k1-again", "o")
	if got := mustReserve(t, s, again); got.Claimed { // attempt 1 again: the failed record stands
		t.Errorf("Reserve of attempt 1 over a failed attempt 1 = %+v; want nothing changed", got)
	}
	skip := req("ns", "a", "k-wrong", "o")
	skip.Attempt = 3
	if got := mustReserve(t, s, skip); got.Claimed {
		t.Errorf("Reserve of attempt 3 over failed attempt 1 = %+v; want nothing changed", got)
	}
	second := req("ns", "a", "k2", "o2")
	second.Attempt, second.Fingerprint = 2, "fp2"
	got := mustReserve(t, s, second)
	r := got.Record
	now := t0.Add(2 * time.Minute)
	switch {
	case !got.Created || !got.Claimed:
		t.Errorf("new attempt: created %v, claimed %v; want both", got.Created, got.Claimed)
	case r.Attempt != 2 || r.Key != "k2" || r.Fingerprint != "fp2" || r.State != idempay.StateOpen || r.Creator != "o2":
		t.Errorf("new attempt = %+v", r)
	case !r.CreatedAt.Equal(now) || !r.ClosedAt.IsZero() || r.ProviderRef != "" || r.Result != nil:
		t.Errorf("new attempt kept the failed one's times or outcome: %+v", r)
	case len(r.History) != 1 || fmt.Sprintf("%+v", r.History[0]) != fmt.Sprintf("%+v", failed.Past()):
		t.Errorf("History = %+v; want the failed attempt %+v", r.History, failed.Past())
	}
	// The record moved from the closed index to the open one.
	c.Advance(365 * 24 * time.Hour)
	if n, err := s.Expire(t.Context(), time.Hour); err != nil || n != 0 {
		t.Errorf("Expire = %d, %v; want the open second attempt kept", n, err)
	}
	if open := listAll(t, s, "ns", 10); len(open) != 1 || open[0].Attempt != 2 || len(open[0].History) != 1 {
		t.Errorf("ListOpen = %+v; want the second attempt with its history", open)
	}
}

func TestResolveStampsTheStoreClock(t *testing.T) {
	s, c := openClocked(t)
	r := mustReserve(t, s, req("ns", "a", "k", "o")).Record
	c.Advance(time.Second)
	rel := closeWith(r, idempay.StatePending)
	rel.LeaseOwner, rel.ProviderRef = "o", "pi_1"
	mustResolve(t, s, rel)
	got, _ := s.Load(t.Context(), "ns", "a")
	if got.State != idempay.StatePending || !got.UpdatedAt.Equal(t0.Add(time.Second)) || !got.ClosedAt.IsZero() || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
		t.Errorf("after a pending release: %+v; want pending, updated t0+1s, not closed, no lease", got)
	}
	c.Advance(time.Second)
	done := closeWith(r, idempay.StateSucceeded)
	done.Durable = true
	mustResolve(t, s, done)
	got, _ = s.Load(t.Context(), "ns", "a")
	if want := t0.Add(2 * time.Second); got.State != idempay.StateSucceeded || !got.UpdatedAt.Equal(want) || !got.ClosedAt.Equal(want) || got.ProviderRef != "pi_1" {
		t.Errorf("after closing: %+v; want succeeded, updated and closed at %v, provider ref kept", got, want)
	}
}

func TestResolveRefusals(t *testing.T) {
	s, _ := openClocked(t)
	ctx := t.Context()
	r := mustReserve(t, s, req("ns", "a", "k", "o")).Record
	cases := []struct {
		res  idempay.Resolution
		want error
	}{
		{idempay.Resolution{Namespace: "ns", ID: "none", Key: "k", State: idempay.StateSucceeded}, idempay.ErrNotFound},
		{idempay.Resolution{Namespace: "other", ID: "a", Key: "k", State: idempay.StateSucceeded}, idempay.ErrNotFound},
		{idempay.Resolution{Namespace: "ns", ID: "a", Key: "k2", State: idempay.StateSucceeded, LeaseOwner: "x"}, idempay.ErrKeyMismatch},
		{idempay.Resolution{Namespace: "ns", ID: "a", Key: "k", State: idempay.StateOpen, LeaseOwner: "x"}, idempay.ErrLeaseLost},
	}
	for _, c := range cases {
		if err := s.Resolve(ctx, c.res); !errors.Is(err, c.want) {
			t.Errorf("Resolve(%+v) = %v; want %v", c.res, err, c.want)
		}
	}
	if got, _ := s.Load(ctx, "ns", "a"); got.LeaseOwner != "o" || got.State != idempay.StateOpen {
		t.Errorf("a refused Resolve changed the record: %+v", got)
	}
	mustResolve(t, s, closeWith(r, idempay.StateFailed))
	lost := closeWith(r, idempay.StateSucceeded)
	lost.LeaseOwner = "x"
	if err := s.Resolve(ctx, lost); !errors.Is(err, idempay.ErrAlreadyResolved) {
		t.Errorf("Resolve of a failed record = %v; want ErrAlreadyResolved before ErrLeaseLost", err)
	}
}

// TestListOpenPages pages through open records that share CreatedAt
// instants, while others close, in the (CreatedAt, IntentID) order.
func TestListOpenPages(t *testing.T) {
	s, c := openClocked(t)
	var want []string
	for i := range 10 {
		for _, id := range []string{"c", "a", "b"} { // same instant: by ID
			id := fmt.Sprintf("%s-%d", id, i)
			mustReserve(t, s, req("ns", id, "k", "o"))
		}
		want = append(want, fmt.Sprintf("a-%d", i), fmt.Sprintf("b-%d", i), fmt.Sprintf("c-%d", i))
		c.Advance(time.Microsecond)
	}
	mustReserve(t, s, req("ns2", "z", "k", "o"))
	page, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 4)
	if err != nil || len(page) != 4 {
		t.Fatalf("first page = %d records, %v", len(page), err)
	}
	// Close a record already read and one not yet read.
	mustResolve(t, s, closeWith(page[1], idempay.StateSucceeded))
	closed, _ := s.Load(t.Context(), "ns", "a-5")
	mustResolve(t, s, closeWith(closed, idempay.StateFailed))
	got := []string{}
	for _, r := range page {
		got = append(got, r.ID)
	}
	after := idempay.CursorOf(page[len(page)-1])
	for {
		page, err := s.ListOpen(t.Context(), "ns", after, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if len(page) < 4 {
			break
		}
		after = idempay.CursorOf(page[len(page)-1])
	}
	want = append(want[:15], want[16:]...) // a-5 closed before it was reached
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("paged ListOpen = %v\nwant %v", got, want)
	}
	if _, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 0); err == nil {
		t.Error("ListOpen with limit 0 succeeded; want an error")
	}
	// A cursor between records, in another time zone.
	mid := idempay.Cursor{CreatedAt: t0.Add(2 * time.Microsecond).In(time.FixedZone("JST", 9*3600)), ID: "a-2x"}
	if page, _ := s.ListOpen(t.Context(), "ns", mid, 1); len(page) != 1 || page[0].ID != "b-2" {
		t.Errorf("ListOpen after %+v = %+v; want b-2", mid, page)
	}
}

// TestExpireJudgesClosedAt: retention runs from closing, on the store's
// clock.
func TestExpireJudgesClosedAt(t *testing.T) {
	s, c := openClocked(t)
	ctx := t.Context()
	r := mustReserve(t, s, req("ns", "late", "k", "o")).Record
	c.Advance(30 * 24 * time.Hour) // unknown for a month
	mustResolve(t, s, closeWith(r, idempay.StateSucceeded))
	c.Advance(6 * 24 * time.Hour)
	if n, err := s.Expire(ctx, 7*24*time.Hour); err != nil || n != 0 {
		t.Errorf("Expire 6 days after closing = %d, %v; want 0", n, err)
	}
	c.Advance(24*time.Hour + time.Microsecond)
	if n, err := s.Expire(ctx, 7*24*time.Hour); err != nil || n != 1 {
		t.Errorf("Expire 7 days after closing = %d, %v; want 1", n, err)
	}
	if _, err := s.Load(ctx, "ns", "late"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load after Expire = %v; want ErrNotFound", err)
	}
	if _, err := s.Expire(ctx, -time.Hour); err == nil {
		t.Error("Expire with a negative retention succeeded; want an error")
	}
}

// TestHistorySurvivesReopen: the format 2 record keeps every field.
func TestHistorySurvivesReopen(t *testing.T) {
	c := newClock()
	path := t.TempDir() + "/keys.db"
	s := reopen(t, path, c)
	r := mustReserve(t, s, req("ns", "a", "k1", "o")).Record
	res := closeWith(r, idempay.StateFailed)
	res.ProviderRef, res.Result = "ch_1", []byte{}
	mustResolve(t, s, res)
	failed, _ := s.Load(t.Context(), "ns", "a")
	second := req("ns", "a", "k2", "o")
	second.Attempt = 2
	want := mustReserve(t, s, second).Record
	s.Close()
	s = reopen(t, path, c)
	defer s.Close()
	got, err := s.Load(t.Context(), "ns", "a")
	if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("after reopen:\n got %+v, %v\nwant %+v", got, err, want)
	}
	if len(got.History) != 1 || got.History[0].Result == nil || got.History[0].ClosedAt != failed.ClosedAt {
		t.Errorf("history = %+v; want the failed attempt with its empty, non-nil result", got.History)
	}
}

// TestStoreClockNeverGoesBack: a file written while the clock was ahead
// does not hold the default clock back (one bad start must not push the
// store ahead for good), but no instant of the file is left after the
// store's clock either, so a wall clock set back across a restart cannot
// lengthen a lease or make an age read negative; the store's clock does
// not go back while it is open.
func TestStoreClockNeverGoesBack(t *testing.T) {
	path := t.TempDir() + "/keys.db"
	ahead := fakes.NewClock(time.Now().Add(48 * time.Hour).UTC().Truncate(time.Microsecond))
	s := reopen(t, path, ahead)
	mustReserve(t, s, req("ns", "a", "k", "o"))
	s.Close()
	before := time.Now()
	s, err := filestore.Open(path, filestore.WithSweepInterval(0), filestore.WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := mustReserve(t, s, req("ns", "b", "k", "o"))
	if res.Now.After(before.Add(time.Hour)) {
		t.Errorf("store clock after reopen = %v; want the host's clock (%v), not the file's ahead one", res.Now, before)
	}
	a := mustReserve(t, s, req("ns", "a", "k", "o"))
	if a.Record.CreatedAt.After(a.Now) || a.Record.UpdatedAt.After(a.Now) || a.Record.LeaseUntil.After(a.Now.Add(time.Minute)) {
		t.Errorf("record written ahead = %+v after reopen at %v; want no instant after the store's clock, no lease longer than granted", a.Record, a.Now)
	}
	if got := mustReserve(t, s, req("ns", "b", "k", "o")); got.Now.Before(res.Now) {
		t.Errorf("store clock went back from %v to %v", res.Now, got.Now)
	}
	if s.ClockJumps() != 1 {
		t.Errorf("ClockJumps = %d; want 1", s.ClockJumps())
	}
}
