package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// retention is the retention the Expire cases pass: long enough that the
// records a case closes just before an Expire are clearly younger, short
// enough that waiting it out keeps the suite fast.
const retention = 200 * time.Millisecond

// expire calls s.Expire(retention) and stops the case on error.
func expire(t *testing.T, s idempay.KeyStore, retention time.Duration) int {
	t.Helper()
	n, err := s.Expire(t.Context(), retention)
	if err != nil {
		t.Fatalf("Expire(%s) = %v; want no error", retention, err)
	}
	return n
}

// checkYoung stops the case if the records closed from since on may be
// older than the retention by now, on a machine too loaded to judge.
func checkYoung(t *testing.T, since time.Time) {
	t.Helper()
	if d := time.Since(since); d > retention-2*ClockSlack {
		t.Fatalf("records closed %s ago were meant to be younger than the retention %s: the machine is too slow for this case", d, retention)
	}
}

// gone reports an error unless the record of (ns, id) has been deleted.
func gone(t *testing.T, s idempay.KeyStore, ns, id, why string) {
	t.Helper()
	if _, err := s.Load(t.Context(), ns, id); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load(%q, %q) after Expire = %v; want ErrNotFound: %s", ns, id, err, why)
	}
}

// kept reports an error unless the record of (ns, id) is still there.
func kept(t *testing.T, s idempay.KeyStore, ns, id, why string) {
	t.Helper()
	if _, err := s.Load(t.Context(), ns, id); err != nil {
		t.Errorf("Load(%q, %q) after Expire = %v; want the record: %s", ns, id, err, why)
	}
}

// closedRecord reserves (ns, id) and resolves it to state, returning the
// stored record.
func closedRecord(t *testing.T, s idempay.KeyStore, ns, id string, state idempay.State) idempay.Record {
	t.Helper()
	r := request(id, "owner-a")
	r.Namespace = ns
	rec := reserve(t, s, r).Record
	return apply(t, s, ns+"/"+id, rec, resolution(rec, state))
}

func expireCases() []testCase {
	return []testCase{{
		name:     "Expire/deletes records closed more than retention ago, in every namespace, and counts them",
		rule:     "Expire(retention) deletes the succeeded and failed records of every namespace whose ClosedAt is more than retention before the store's now, keeps those closed since, and returns how many it deleted; a second Expire deletes nothing; an expired intent's next Reserve creates a new record",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			old := []idempay.Record{
				closedRecord(t, s, "ns", "old-succeeded", idempay.StateSucceeded),
				closedRecord(t, s, "ns", "old-failed", idempay.StateFailed),
				closedRecord(t, s, "other", "old-succeeded", idempay.StateSucceeded),
			}
			sleepPast(old[len(old)-1].ClosedAt.Add(retention))
			since := time.Now()
			young := []idempay.Record{
				closedRecord(t, s, "ns", "new-succeeded", idempay.StateSucceeded),
				closedRecord(t, s, "other", "new-failed", idempay.StateFailed),
			}
			n := expire(t, s, retention)
			checkYoung(t, since)
			if n != len(old) {
				t.Errorf("Expire(%s) = %d; want %d, the records closed more than %s ago", retention, n, len(old), retention)
			}
			for _, r := range old {
				gone(t, s, r.Namespace, r.ID, "it was closed more than the retention ago")
			}
			for _, r := range young {
				kept(t, s, r.Namespace, r.ID, "it was closed less than the retention ago")
			}
			if n := expire(t, s, retention); n != 0 {
				t.Errorf("a second Expire right after the first = %d; want 0", n)
			}

			r := request("old-succeeded", "owner-b")
			r.Key = "key-new"
			got := reserve(t, s, r)
			checkReply(t, "Reserve of an expired intent", got, true, true)
			checkRecord(t, "Reserve of an expired intent starts afresh", got.Record, inserted(r, got.Now))
		},
	}, {
		name:     "Expire/retention runs from ClosedAt, not CreatedAt",
		rule:     "A record that stayed open for longer than the retention and then closed is kept by an Expire right after it closed, and deleted once the retention has passed since its ClosedAt: an intent settled late must still answer replays for the whole retention (issue 8, item 1)",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			var recs []idempay.Record
			for _, id := range []string{"late-succeeded", "late-failed"} {
				recs = append(recs, reserve(t, s, request(id, "owner-a")).Record)
			}
			sleepPast(recs[len(recs)-1].CreatedAt.Add(retention))
			since := time.Now()
			for i, state := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
				recs[i] = apply(t, s, "closing "+recs[i].ID, recs[i], resolution(recs[i], state))
			}
			n := expire(t, s, retention)
			checkYoung(t, since)
			if n != 0 {
				t.Errorf("Expire(%s) right after records created more than %s ago were closed = %d; want 0", retention, retention, n)
			}
			for _, r := range recs {
				kept(t, s, r.Namespace, r.ID, "it was created long ago but closed just now")
			}

			sleepPast(recs[len(recs)-1].ClosedAt.Add(retention))
			if n := expire(t, s, retention); n != len(recs) {
				t.Errorf("Expire(%s) once the retention passed since the records closed = %d; want %d", retention, n, len(recs))
			}
			for _, r := range recs {
				gone(t, s, r.Namespace, r.ID, "the retention has passed since it closed")
			}
		},
	}, {
		name:     "Expire/never deletes open or pending records",
		rule:     "Expire never deletes an open or pending record, however old and whatever the retention (zero included), whether its lease is held, released or run out: it stands for money that may have moved",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			var recs []idempay.Record
			recs = append(recs, reserve(t, s, request("open-held", "owner-a")).Record)
			recs = append(recs, reserve(t, s, withLease(request("open-run-out", "owner-a"), shortLease)).Record)
			p := reserve(t, s, request("pending", "owner-a")).Record
			recs = append(recs, apply(t, s, "pending", p, resolution(p, idempay.StatePending)))
			f := reserve(t, s, request("open-released", "owner-a")).Record
			recs = append(recs, apply(t, s, "released", f, release(f, "owner-a")))

			sleepPast(recs[len(recs)-1].UpdatedAt.Add(max(shortLease, 2*ClockSlack)))
			for _, ret := range []time.Duration{0, time.Millisecond, retention} {
				if n := expire(t, s, ret); n != 0 {
					t.Errorf("Expire(%s) with only open and pending records = %d; want 0", ret, n)
				}
			}
			for _, r := range recs {
				checkStored(t, s, r.ID+" after Expire", r)
			}
		},
	}, {
		name:     "Expire/a record that began a new attempt is judged by its current attempt",
		rule:     "Expire judges a record by its current attempt: an open attempt following a failed one long closed is never deleted, and once closed it is kept for the whole retention after its own ClosedAt, whatever History says",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			old := failed(t, s, "order-1")
			r := nextAttempt("order-1", 2, "owner-b")
			cur := begun(old, r, reserve(t, s, r).Now)
			sleepPast(old.ClosedAt.Add(retention))
			if n := expire(t, s, retention); n != 0 {
				t.Errorf("Expire(%s) with the open attempt 2 of a record whose attempt 1 closed long ago = %d; want 0", retention, n)
			}
			checkStored(t, s, "an open attempt after Expire", cur)

			since := time.Now()
			cur = apply(t, s, "closing attempt 2", cur, resolution(cur, idempay.StateSucceeded))
			n := expire(t, s, retention)
			checkYoung(t, since)
			if n != 0 {
				t.Errorf("Expire(%s) right after attempt 2 closed = %d; want 0", retention, n)
			}
			kept(t, s, "ns", "order-1", "its current attempt closed just now")

			sleepPast(cur.ClosedAt.Add(retention))
			if n := expire(t, s, retention); n != 1 {
				t.Errorf("Expire(%s) once the retention passed since attempt 2 closed = %d; want 1", retention, n)
			}
			gone(t, s, "ns", "order-1", "the retention has passed since its current attempt closed")
		},
	}}
}
