package storetest

import (
	"fmt"
	"testing"

	"github.com/idempay/idempay"
)

// nextAttempt is the request by owner for attempt n of intent id with new
// parameters (another card): a key and fingerprint of its own.
func nextAttempt(id string, n int, owner string) idempay.ReserveRequest {
	r := request(id, owner)
	r.Attempt = n
	r.Key = fmt.Sprintf("key-%s-attempt-%d-%s", id, n, owner)
	r.Fingerprint = fmt.Sprintf("fp-%s-card-%d", id, n)
	return r
}

// failed reserves attempt 1 of id by owner-a and resolves it to failed,
// with a ProviderRef and a Result; it returns the stored record.
func failed(t *testing.T, s idempay.KeyStore, id string) idempay.Record {
	t.Helper()
	rec := reserve(t, s, request(id, "owner-a")).Record
	res := resolution(rec, idempay.StateFailed)
	res.ProviderRef = "ch_declined_" + id
	res.Result = []byte(`{"decline_code":"card_declined"}`)
	return apply(t, s, "Resolve of attempt 1 to failed", rec, res)
}

func attemptCases() []testCase {
	return []testCase{{
		name: "Attempt/a failed record and the next attempt number begin a new attempt",
		rule: "Reserve with Attempt = stored Attempt+1 on a failed record begins a new attempt: the failed one is appended to History (attempt, key, fingerprint, state, CreatedAt, ClosedAt, ProviderRef, Result), and the record becomes r's attempt with r's key and fingerprint, open, CreatedAt = UpdatedAt = Now, ClosedAt, ProviderRef and Result cleared, Creator and LeaseOwner r.Owner, LeaseUntil = Now + r.Lease; Created and Claimed. Its creator's repeat is Created again without a second History entry",
		run: func(t *testing.T, s idempay.KeyStore) {
			old := failed(t, s, "order-1")
			r := nextAttempt("order-1", 2, "owner-b")
			got := reserve(t, s, r)
			checkReply(t, "Reserve of attempt 2 over failed attempt 1", got, true, true)
			want := begun(old, r, got.Now)
			checkRecord(t, "the new attempt as Reserve returned it", got.Record, want)
			checkStored(t, s, "the new attempt", want)

			again := reserve(t, s, r)
			checkReply(t, "the new attempt's creator repeating its Reserve", again, true, true)
			want = claimed(want, r, again.Now)
			checkRecord(t, "a repeated Reserve of the new attempt must not begin it again", again.Record, want)

			c := nextAttempt("order-1", 2, "owner-c")
			c.Fingerprint = r.Fingerprint
			checkReply(t, "Reserve of attempt 2 by another owner while owner-b holds it", reserve(t, s, c), false, false)
			checkStored(t, s, "a refused Reserve of the new attempt", want)

			// The same parameters may be tried again when nothing
			// reached the provider: the fingerprint does not matter.
			old = failed(t, s, "order-2")
			same := nextAttempt("order-2", 2, "owner-b")
			same.Fingerprint = old.Fingerprint
			got = reserve(t, s, same)
			checkReply(t, "Reserve of attempt 2 with attempt 1's fingerprint", got, true, true)
			checkStored(t, s, "a new attempt with the failed attempt's fingerprint", begun(old, same, got.Now))
		},
	}, {
		name: "Attempt/the same or a skipped attempt number begins nothing",
		rule: "Reserve on a failed record with an Attempt other than stored Attempt+1 (the same, an earlier one, or one skipping ahead) begins no attempt and claims nothing: neither Created nor Claimed, the record unchanged",
		run: func(t *testing.T, s idempay.KeyStore) {
			rec := failed(t, s, "order-1")
			for _, n := range []int{1, 3, 7} {
				got := reserve(t, s, nextAttempt("order-1", n, "owner-b"))
				checkReply(t, fmt.Sprintf("Reserve of attempt %d over failed attempt 1", n), got, false, false)
				checkRecord(t, fmt.Sprintf("Reserve of attempt %d must return the failed record unchanged", n), got.Record, rec)
			}
			checkStored(t, s, "Reserves with wrong attempt numbers must not change the record", rec)

			r := nextAttempt("order-1", 2, "owner-b")
			rec = begun(rec, r, reserve(t, s, r).Now)
			rec = apply(t, s, "Resolve of attempt 2 to failed", rec, resolution(rec, idempay.StateFailed))
			for _, n := range []int{1, 2, 4} {
				got := reserve(t, s, nextAttempt("order-1", n, "owner-c"))
				checkReply(t, fmt.Sprintf("Reserve of attempt %d over failed attempt 2", n), got, false, false)
				checkRecord(t, fmt.Sprintf("Reserve of attempt %d must return the failed record unchanged", n), got.Record, rec)
			}
			checkStored(t, s, "Reserves with wrong attempt numbers must not change the record", rec)
		},
	}, {
		name: "Attempt/only a failed record is followed by a new attempt",
		rule: "Reserve with Attempt = stored Attempt+1 on a succeeded, open or pending record (held or released) begins no attempt: neither Created nor Claimed, the record unchanged. Money may have moved, or did: the attempt must be settled first, and a success answers for the intent",
		run: func(t *testing.T, s idempay.KeyStore) {
			var recs []idempay.Record
			ok := reserve(t, s, request("order-succeeded", "owner-a")).Record
			recs = append(recs, apply(t, s, "Resolve to succeeded", ok, resolution(ok, idempay.StateSucceeded)))
			recs = append(recs, reserve(t, s, request("order-open-held", "owner-a")).Record)
			free := reserve(t, s, request("order-open-released", "owner-a")).Record
			recs = append(recs, apply(t, s, "release", free, release(free, "owner-a")))
			p := reserve(t, s, request("order-pending", "owner-a")).Record
			recs = append(recs, apply(t, s, "Resolve to pending", p, resolution(p, idempay.StatePending)))

			for _, rec := range recs {
				for _, owner := range []string{"owner-a", "owner-b"} {
					got := reserve(t, s, nextAttempt(rec.ID, 2, owner))
					checkReply(t, fmt.Sprintf("Reserve of attempt 2 by %s over %s (%s, lease %q)", owner, rec.ID, rec.State, rec.LeaseOwner), got, false, false)
					checkRecord(t, "Reserve of attempt 2 over a record that is not failed must return it unchanged", got.Record, rec)
				}
				checkStored(t, s, "Reserve of attempt 2 over a record that is not failed must not change it", rec)
			}
		},
	}, {
		name: "Attempt/History round-trips exactly, several attempts deep",
		rule: "Every failed attempt is kept in History in order, each with its attempt number, key, fingerprint, state, CreatedAt and ClosedAt at microsecond precision, ProviderRef and Result bytes exactly as they were, however many attempts came after it",
		run: func(t *testing.T, s idempay.KeyStore) {
			refs := []string{"ch_1", "", "ch_3", "ch_4"}
			results := [][]byte{[]byte(`{"decline_code":"insufficient_funds"}`), nil, allBytes(), {}}
			var want idempay.Record
			for n := 1; n <= len(refs)+1; n++ {
				r := nextAttempt("order-1", n, fmt.Sprintf("owner-%d", n))
				got := reserve(t, s, r)
				checkReply(t, fmt.Sprintf("Reserve of attempt %d", n), got, true, true)
				if n == 1 {
					want = inserted(r, got.Now)
				} else {
					want = begun(want, r, got.Now)
				}
				checkRecord(t, fmt.Sprintf("attempt %d as Reserve returned it", n), got.Record, want)
				res := resolution(want, idempay.StateSucceeded)
				if n <= len(refs) {
					res.State, res.ProviderRef, res.Result = idempay.StateFailed, refs[n-1], results[n-1]
				}
				want = apply(t, s, fmt.Sprintf("Resolve of attempt %d to %s", n, res.State), want, res)
			}
			got := load(t, s, "ns", "order-1")
			for i, p := range got.History {
				if p.Attempt != i+1 || p.State != idempay.StateFailed {
					t.Errorf("History[%d] is attempt %d, %s; want attempt %d, failed", i, p.Attempt, p.State, i+1)
				}
			}
		},
	}}
}
