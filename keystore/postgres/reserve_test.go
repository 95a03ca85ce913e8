package postgres

import (
	"bytes"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestReserveInserts checks the record a first Reserve writes: every
// instant the server's, taken at one moment between two readings of the
// server's clock, and the lease from that moment.
func TestReserveInserts(t *testing.T) {
	s := openStore(t)
	before := serverNow(t, s)
	res := reserve(t, s, request("ns", "a"))
	after := serverNow(t, s)
	rec := res.Record
	if !res.Created || !res.Claimed {
		t.Fatalf("Reserve of a new intent: Created %v, Claimed %v; want both", res.Created, res.Claimed)
	}
	if res.Now.Before(before) || res.Now.After(after) {
		t.Errorf("Reservation.Now = %s; want the server's clock, between %s and %s", res.Now, before, after)
	}
	if !rec.CreatedAt.Equal(res.Now) || !rec.UpdatedAt.Equal(res.Now) || !rec.LeaseUntil.Equal(res.Now.Add(time.Minute)) {
		t.Errorf("CreatedAt %s, UpdatedAt %s, LeaseUntil %s; want Now (%s), Now, Now + 1m",
			rec.CreatedAt, rec.UpdatedAt, rec.LeaseUntil, res.Now)
	}
	want := idempay.Record{Namespace: "ns", ID: "a", Attempt: 1, Key: "key-a", Fingerprint: "fp-a",
		State: idempay.StateOpen, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, Creator: "owner",
		LeaseOwner: "owner", LeaseUntil: rec.LeaseUntil}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("record = %+v\nwant     %+v", rec, want)
	}
	if got, err := s.Load(t.Context(), "ns", "a"); err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("Load = %+v, %v; want what Reserve returned, %+v", got, err, rec)
	}
}

// TestReserveRenews checks that the holder's Reserve renews its lease from
// the server's now, which never goes back, and is still told Created (the
// rule for a Reserve repeated after a lost reply).
func TestReserveRenews(t *testing.T) {
	s := openStore(t)
	first := reserve(t, s, request("ns", "a"))
	again := reserve(t, s, request("ns", "a"))
	if !again.Claimed || !again.Created {
		t.Errorf("Reserve repeated by the creator: Claimed %v, Created %v; want both", again.Claimed, again.Created)
	}
	if !again.Now.After(first.Now) {
		t.Errorf("second Now %s is not after the first %s", again.Now, first.Now)
	}
	rec := again.Record
	if !rec.UpdatedAt.Equal(again.Now) || !rec.LeaseUntil.Equal(again.Now.Add(time.Minute)) || !rec.CreatedAt.Equal(first.Now) {
		t.Errorf("renewed: CreatedAt %s, UpdatedAt %s, LeaseUntil %s; want the first Now %s, Now %s and Now + 1m",
			rec.CreatedAt, rec.UpdatedAt, rec.LeaseUntil, first.Now, again.Now)
	}
}

// TestReserveRefuses checks every case in which Reserve changes nothing:
// neither Created nor Claimed, and the record returned as it was.
func TestReserveRefuses(t *testing.T) {
	other := func(mod func(*idempay.ReserveRequest)) idempay.ReserveRequest {
		r := request("ns", "a")
		mod(&r)
		return r
	}
	for name, tc := range map[string]struct {
		state idempay.State // the stored record's, after the first Reserve
		req   idempay.ReserveRequest
	}{
		"leased to another owner": {idempay.StateOpen, other(func(r *idempay.ReserveRequest) { r.Owner = "owner-2" })},
		"pending, leased to another": {idempay.StatePending, other(func(r *idempay.ReserveRequest) {
			r.Owner = "owner-2"
		})},
		"other fingerprint, same owner": {idempay.StateOpen, other(func(r *idempay.ReserveRequest) { r.Fingerprint = "fp-x" })},
		"succeeded":                     {idempay.StateSucceeded, request("ns", "a")},
		"failed, same attempt":          {idempay.StateFailed, request("ns", "a")},
		"failed, attempt skipped": {idempay.StateFailed, other(func(r *idempay.ReserveRequest) {
			r.Attempt, r.Key = 3, "key-3"
		})},
		"succeeded, next attempt": {idempay.StateSucceeded, other(func(r *idempay.ReserveRequest) {
			r.Attempt, r.Key = 2, "key-2"
		})},
	} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			reserve(t, s, request("ns", "a"))
			if tc.state == idempay.StatePending {
				// A pending record keeps its lease only while its
				// holder renews it: take it again after the release.
				resolve(t, s, "ns", "a", tc.state)
				reserve(t, s, request("ns", "a"))
			} else if tc.state != idempay.StateOpen {
				resolve(t, s, "ns", "a", tc.state)
			}
			before, err := s.Load(t.Context(), "ns", "a")
			if err != nil {
				t.Fatal(err)
			}
			res := reserve(t, s, tc.req)
			if res.Created || res.Claimed {
				t.Errorf("Created %v, Claimed %v; want neither", res.Created, res.Claimed)
			}
			if !reflect.DeepEqual(res.Record, before) {
				t.Errorf("record returned %+v\nwant as stored    %+v", res.Record, before)
			}
			if after, _ := s.Load(t.Context(), "ns", "a"); !reflect.DeepEqual(after, before) {
				t.Errorf("record changed to %+v\nfrom               %+v", after, before)
			}
			if res.Now.Before(before.UpdatedAt) {
				t.Errorf("Now %s is before the record's UpdatedAt %s", res.Now, before.UpdatedAt)
			}
		})
	}
}

// TestReserveTakesOverAtLeaseUntil checks that a lease is over at
// LeaseUntil itself on the server's clock: lease_until is set to an
// instant already past on that clock, and another owner takes the lease,
// keeping the stored key and creator; it is not told Created.
func TestReserveTakesOverAtLeaseUntil(t *testing.T) {
	s := openStore(t)
	first := reserve(t, s, request("ns", "a"))
	exec(t, s, `UPDATE {t} SET lease_until = clock_timestamp()`)
	r := request("ns", "a")
	r.Owner, r.Key = "owner-2", "key-other"
	res := reserve(t, s, r)
	if !res.Claimed || res.Created {
		t.Fatalf("Reserve after the lease ran out: Claimed %v, Created %v; want claimed, not created", res.Claimed, res.Created)
	}
	if rec := res.Record; rec.Key != first.Record.Key || rec.Creator != "owner" || rec.LeaseOwner != "owner-2" {
		t.Errorf("after the takeover: key %q, creator %q, lease owner %q; want %q, %q, %q",
			rec.Key, rec.Creator, rec.LeaseOwner, first.Record.Key, "owner", "owner-2")
	}
}

// TestReserveFreeLease checks that a released lease is taken at once by
// another owner.
func TestReserveFreeLease(t *testing.T) {
	s := openStore(t)
	rec := reserve(t, s, request("ns", "a")).Record
	if err := s.Resolve(t.Context(), idempay.Resolution{Namespace: "ns", ID: "a", Key: rec.Key,
		State: idempay.StateOpen, LeaseOwner: "owner"}); err != nil {
		t.Fatal(err)
	}
	r := request("ns", "a")
	r.Owner = "owner-2"
	if res := reserve(t, s, r); !res.Claimed || res.Record.LeaseOwner != "owner-2" {
		t.Errorf("Reserve of a released record: Claimed %v, owner %q; want claimed by owner-2", res.Claimed, res.Record.LeaseOwner)
	}
}

// binaryResult is a result of every byte value, longer than the 57 bytes
// after which PostgreSQL's base64 breaks lines.
func binaryResult() []byte {
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestReserveBeginsAttempt checks that a Reserve of attempt 2 over a failed
// attempt 1 makes a new attempt and keeps the old one in History, exactly
// as it was, and that a third attempt appends again.
func TestReserveBeginsAttempt(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	one := reserve(t, s, request("ns", "a")).Record
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: "a", Key: one.Key,
		State: idempay.StateFailed, ProviderRef: "ch_1", Result: binaryResult()}); err != nil {
		t.Fatal(err)
	}
	failed, err := s.Load(ctx, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	r := idempay.ReserveRequest{Namespace: "ns", ID: "a", Attempt: 2, Key: "key-2", Fingerprint: "fp-2",
		Owner: "owner-2", Lease: time.Minute}
	res := reserve(t, s, r)
	if !res.Created || !res.Claimed {
		t.Fatalf("Reserve of attempt 2 over a failed attempt 1: Created %v, Claimed %v; want both", res.Created, res.Claimed)
	}
	want := idempay.Record{Namespace: "ns", ID: "a", Attempt: 2, Key: "key-2", Fingerprint: "fp-2",
		State: idempay.StateOpen, CreatedAt: res.Now, UpdatedAt: res.Now, Creator: "owner-2",
		LeaseOwner: "owner-2", LeaseUntil: res.Now.Add(time.Minute),
		History: []idempay.PastAttempt{failed.Past()}}
	if !reflect.DeepEqual(res.Record, want) {
		t.Errorf("attempt 2 = %+v\nwant        %+v", res.Record, want)
	}
	if p := res.Record.History[0]; !bytes.Equal(p.Result, binaryResult()) || !p.ClosedAt.Equal(failed.ClosedAt) || p.ClosedAt.IsZero() {
		t.Errorf("History[0] result %d bytes, closed %s; want the failed attempt's %d bytes, closed %s",
			len(p.Result), p.ClosedAt, len(binaryResult()), failed.ClosedAt)
	}

	resolve(t, s, "ns", "a", idempay.StateFailed)
	r.Attempt, r.Key = 3, "key-3"
	three := reserve(t, s, r).Record
	if len(three.History) != 2 || three.History[0].Key != one.Key || three.History[1].Key != "key-2" ||
		three.History[1].Attempt != 2 || three.History[1].ProviderRef != "" || three.Key != "key-3" {
		t.Errorf("attempt 3: key %q, history %+v; want key-3 after attempts 1 and 2", three.Key, three.History)
	}
}

// TestReserveOneNewAttempt races callers beginning attempt 2 over one
// failed record, each with its own key: exactly one makes it, and every
// other is refused and sees that one's key.
func TestReserveOneNewAttempt(t *testing.T) {
	s := openStore(t)
	reserve(t, s, request("ns", "a"))
	resolve(t, s, "ns", "a", idempay.StateFailed)
	const callers = 8
	results := make([]idempay.Reservation, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			r := idempay.ReserveRequest{Namespace: "ns", ID: "a", Attempt: 2,
				Key: "key-2-" + string(rune('a'+i)), Fingerprint: "fp-2", Owner: "owner-" + string(rune('a'+i)),
				Lease: time.Minute}
			results[i] = reserve(t, s, r)
		})
	}
	wg.Wait()
	created := 0
	for i, res := range results {
		if res.Created {
			created++
		}
		if res.Record.Attempt != 2 {
			t.Errorf("caller %d was told attempt %d; want 2", i, res.Record.Attempt)
		}
	}
	stored, err := s.Load(t.Context(), "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if res.Record.Key != stored.Key {
			t.Errorf("caller %d was told key %q; the stored key is %q", i, res.Record.Key, stored.Key)
		}
	}
	if created != 1 || len(stored.History) != 1 {
		t.Errorf("%d callers created attempt 2, history has %d attempts; want exactly 1 and 1", created, len(stored.History))
	}
}

// TestReserveChecksRequest checks that a request no store should act on is
// refused before the database is asked.
func TestReserveChecksRequest(t *testing.T) {
	s := openStore(t)
	r := request("ns", "a")
	r.Lease = 0
	if _, err := s.Reserve(t.Context(), r); err == nil {
		t.Error("Reserve with a zero lease = nil error; want the request refused")
	}
	if _, err := s.Load(t.Context(), "ns", "a"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load after a refused Reserve = %v; want ErrNotFound", err)
	}
}
