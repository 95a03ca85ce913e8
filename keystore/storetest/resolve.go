package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

var allStates = []idempay.State{idempay.StateOpen, idempay.StatePending, idempay.StateSucceeded, idempay.StateFailed}

func resolveCases() []testCase {
	return []testCase{{
		name: "Resolve/missing record returns ErrNotFound",
		rule: "Resolve of an intent with no record returns an error matching ErrNotFound and creates nothing",
		run: func(t *testing.T, s idempay.KeyStore) {
			res := idempay.Resolution{Namespace: "ns", ID: "order-1", Key: "key-1", State: idempay.StateSucceeded}
			if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Resolve of a missing record = %v; want ErrNotFound", err)
			}
			if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load after Resolve of a missing record = %v; want ErrNotFound: Resolve must not create records", err)
			}
		},
	}, {
		name: "Resolve/another key returns ErrKeyMismatch and changes nothing",
		rule: "Resolve naming a key other than the stored one returns an error matching ErrKeyMismatch and leaves the record unchanged",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			for _, state := range allStates {
				res := resolution(r, state)
				res.Key, res.ProviderRef, res.Result = "key-2", "ch_wrong", []byte("wrong")
				if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrKeyMismatch) {
					t.Errorf("Resolve to %s with another key = %v; want ErrKeyMismatch", state, err)
				}
			}
			checkStored(t, s, "Resolve with another key must not change the record", r)
		},
	}, {
		name: "Resolve/closed record returns ErrAlreadyResolved and changes nothing",
		rule: "Resolve of a succeeded or failed record returns an error matching ErrAlreadyResolved and leaves the record unchanged, ClosedAt included: a known outcome is final",
		run: func(t *testing.T, s idempay.KeyStore) {
			for _, final := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
				id := "order-" + string(final)
				r := reserve(t, s, request(id, "owner-a")).Record
				first := resolution(r, final)
				first.ProviderRef, first.Result = "ch_1", []byte("first")
				want := apply(t, s, "Resolve to "+string(final), r, first)
				for _, state := range allStates {
					res := resolution(r, state)
					res.ProviderRef, res.Result = "ch_2", []byte("second")
					if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrAlreadyResolved) {
						t.Errorf("Resolve of a %s record to %s = %v; want ErrAlreadyResolved", final, state, err)
					}
				}
				checkStored(t, s, "Resolve of a "+string(final)+" record must not change it", want)
			}
		},
	}, {
		name: "Resolve/errors come in order: not found, key, closed, then lease owner",
		rule: "With a LeaseOwner that does not hold the lease, Resolve still returns ErrNotFound for a missing record, ErrKeyMismatch for another key and ErrAlreadyResolved for a closed record: the owner is checked last",
		run: func(t *testing.T, s idempay.KeyStore) {
			missing := idempay.Resolution{Namespace: "ns", ID: "order-0", Key: "key-0", State: idempay.StateOpen, LeaseOwner: "owner-b"}
			if err := s.Resolve(t.Context(), missing); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Resolve of a missing record by a non-holder = %v; want ErrNotFound", err)
			}

			r := reserve(t, s, request("order-1", "owner-a")).Record
			res := release(r, "owner-b")
			res.Key = "key-2"
			if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrKeyMismatch) {
				t.Errorf("Resolve with another key by a non-holder = %v; want ErrKeyMismatch", err)
			}
			checkStored(t, s, "a refused Resolve must not change the record", r)

			done := apply(t, s, "Resolve to succeeded", r, resolution(r, idempay.StateSucceeded))
			// owner-a held the lease until the record was closed.
			if err := s.Resolve(t.Context(), release(r, "owner-a")); !errors.Is(err, idempay.ErrAlreadyResolved) {
				t.Errorf("release of a closed record by its former holder = %v; want ErrAlreadyResolved", err)
			}
			checkStored(t, s, "a refused Resolve must not change a closed record", done)
		},
	}, {
		name: "Resolve/open to pending to succeeded, stamped by the store",
		rule: "Resolve moves an open record to pending and a pending one to succeeded; each Resolve sets UpdatedAt to the store's clock during the call and releases the lease; ClosedAt stays zero at pending and becomes that same instant at succeeded",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			pending := resolution(r, idempay.StatePending)
			pending.ProviderRef = "pi_3DS"
			want := apply(t, s, "after Resolve to pending", r, pending)

			done := resolution(r, idempay.StateSucceeded)
			done.Result = []byte(`{"id":"pi_3DS","status":"succeeded"}`)
			apply(t, s, "after Resolve from pending to succeeded", want, done)
		},
	}, {
		name: "Resolve/open or pending to failed",
		rule: "Resolve moves an open or a pending record to failed, stamps UpdatedAt and ClosedAt with the store's clock and releases the lease",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			fail := resolution(r, idempay.StateFailed)
			fail.Result = []byte(`{"decline_code":"insufficient_funds"}`)
			apply(t, s, "after Resolve from open to failed", r, fail)

			p := reserve(t, s, request("order-2", "owner-a")).Record
			p = apply(t, s, "after Resolve to pending", p, resolution(p, idempay.StatePending))
			apply(t, s, "after Resolve from pending to failed", p, resolution(p, idempay.StateFailed))
		},
	}, {
		name:     "Resolve/ClosedAt is stamped on closing and zero while unsettled",
		rule:     "ClosedAt is the zero time while a record is open or pending, through claims, releases and Resolves to pending, and becomes the store's clock at the Resolve that closes it (not its CreatedAt, however long it stayed open); a refused Resolve leaves it",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			unsettled := func(what string, rec idempay.Record) {
				t.Helper()
				if !rec.ClosedAt.IsZero() {
					t.Errorf("%s: ClosedAt = %s; want the zero time, the record is %s", what, fmtTime(rec.ClosedAt), rec.State)
				}
			}
			r := request("order-1", "owner-a")
			got := reserve(t, s, r)
			unsettled("Reserve's answer", got.Record)
			rec := got.Record
			rec = apply(t, s, "release", rec, release(rec, "owner-a"))
			unsettled("after a release", load(t, s, "ns", "order-1"))
			res := resolution(rec, idempay.StatePending)
			res.Result = []byte("3DS")
			rec = apply(t, s, "Resolve to pending", rec, res)
			unsettled("after Resolve to pending", load(t, s, "ns", "order-1"))
			b := request("order-1", "owner-b")
			got = reserve(t, s, b)
			unsettled("after a claim", got.Record)
			rec = claimed(rec, b, got.Now)

			// It stays open a while, so that ClosedAt cannot be
			// mistaken for CreatedAt or the claim's UpdatedAt.
			time.Sleep(2*ClockSlack + 10*time.Millisecond)
			rec = apply(t, s, "Resolve to failed", rec, resolution(rec, idempay.StateFailed))
			if got := load(t, s, "ns", "order-1"); !got.ClosedAt.After(got.CreatedAt.Add(2 * ClockSlack)) {
				t.Errorf("ClosedAt %s of a record created at %s and closed %s later; want the closing instant", fmtTime(got.ClosedAt), fmtTime(got.CreatedAt), 2*ClockSlack+10*time.Millisecond)
			}
			if err := s.Resolve(t.Context(), resolution(rec, idempay.StateSucceeded)); !errors.Is(err, idempay.ErrAlreadyResolved) {
				t.Errorf("Resolve of a failed record = %v; want ErrAlreadyResolved", err)
			}
			checkStored(t, s, "a refused Resolve must keep ClosedAt", rec)
		},
	}, {
		name: "Resolve/State Open only releases the lease",
		rule: "Resolve with State Open keeps the record's state (open stays open, pending stays pending), clears LeaseOwner and LeaseUntil, stamps UpdatedAt and leaves ClosedAt zero",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			got := apply(t, s, "after Resolve with State Open on an open record", r, resolution(r, idempay.StateOpen))
			if got.State != idempay.StateOpen || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
				t.Errorf("after a release: state %s, LeaseOwner %q, LeaseUntil %s; want open, no owner, zero time", got.State, got.LeaseOwner, fmtTime(got.LeaseUntil))
			}

			p := reserve(t, s, request("order-2", "owner-a")).Record
			p = apply(t, s, "after Resolve to pending", p, resolution(p, idempay.StatePending))
			// The pending record is claimed again, then released: the
			// release must not turn it back into open.
			a := request("order-2", "owner-a")
			p = claimed(p, a, reserve(t, s, a).Now)
			apply(t, s, "after Resolve with State Open on a pending record", p, resolution(p, idempay.StateOpen))
		},
	}, {
		name: "Resolve/empty ProviderRef and nil Result keep the stored ones",
		rule: "Resolve keeps the stored ProviderRef when res.ProviderRef is empty and the stored Result when res.Result is nil, and replaces them otherwise (a non-nil empty Result replaces)",
		run: func(t *testing.T, s idempay.KeyStore) {
			want := reserve(t, s, request("order-1", "owner-a")).Record
			steps := []idempay.Resolution{
				{State: idempay.StatePending, ProviderRef: "ch_1", Result: []byte("r1")},
				{State: idempay.StateOpen},                                             // keeps both
				{State: idempay.StatePending, ProviderRef: "ch_2"},                     // replaces the ref only
				{State: idempay.StatePending, Result: []byte("r2")},                    // replaces the result only
				{State: idempay.StateSucceeded, ProviderRef: "ch_3", Result: []byte{}}, // replaces both
			}
			for i, step := range steps {
				step.Namespace, step.ID, step.Key = want.Namespace, want.ID, want.Key
				want = apply(t, s, fmt.Sprintf("after Resolve step %d (%s, ref %q, result %q)", i+1, step.State, step.ProviderRef, step.Result), want, step)
			}
		},
	}, {
		name: "Resolve/Result bytes round-trip exactly",
		rule: "The Result bytes written by Resolve are read back byte for byte, whatever they are (not text, not valid UTF-8)",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			res := resolution(r, idempay.StatePending)
			res.Result = allBytes()
			r = apply(t, s, "binary Result on a pending record", r, res)
			res = resolution(r, idempay.StateSucceeded)
			res.Result = append(allBytes(), allBytes()...)
			apply(t, s, "binary Result on a succeeded record", r, res)
		},
	}, {
		name: "Resolve/Result and History are copied in and out",
		rule: "A store keeps its own copy of every Result: changing the slice given to Resolve, or the Result and History returned by Reserve or Load, afterwards does not change the stored record",
		run: func(t *testing.T, s idempay.KeyStore) {
			old := failed(t, s, "order-1")
			r := nextAttempt("order-1", 2, "owner-b")
			got := reserve(t, s, r)
			want := begun(old, r, got.Now)
			res := resolution(want, idempay.StatePending)
			res.Result = []byte("original")
			want = apply(t, s, "Resolve to pending", want, res)
			want.Result = []byte("original")
			want.History[0].Result = []byte(`{"decline_code":"card_declined"}`)

			copy(res.Result, "CHANGED!")
			checkStored(t, s, "after the caller changed the slice it gave to Resolve", want)
			for _, h := range got.Record.History {
				copy(h.Result, "CHANGED!")
			}
			checkStored(t, s, "after the caller changed the History Reserve returned", want)
			loaded := load(t, s, "ns", "order-1")
			copy(loaded.Result, "CHANGED!")
			for _, h := range loaded.History {
				copy(h.Result, "CHANGED!")
			}
			checkStored(t, s, "after the caller changed the Result and History Load returned", want)
		},
	}, {
		name: "Resolve/Durable writes behave like any other",
		rule: "Resolve with Durable set does what the same Resolve without it does (records the outcome, releases, stamps the store's clock) and refuses what it refuses (ErrKeyMismatch, ErrLeaseLost, ErrAlreadyResolved, changing nothing); only its durability differs",
		run: func(t *testing.T, s idempay.KeyStore) {
			durable := func(res idempay.Resolution) idempay.Resolution { res.Durable = true; return res }
			r := reserve(t, s, request("order-1", "owner-a")).Record
			wrongKey := durable(resolution(r, idempay.StateSucceeded))
			wrongKey.Key = "key-other"
			if err := s.Resolve(t.Context(), wrongKey); !errors.Is(err, idempay.ErrKeyMismatch) {
				t.Errorf("durable Resolve with another key = %v; want ErrKeyMismatch", err)
			}
			if err := s.Resolve(t.Context(), durable(release(r, "owner-b"))); !errors.Is(err, idempay.ErrLeaseLost) {
				t.Errorf("durable release by an owner not holding the lease = %v; want ErrLeaseLost", err)
			}
			checkStored(t, s, "refused durable Resolves must not change the record", r)

			toPending := durable(release(r, "owner-a"))
			toPending.State, toPending.ProviderRef = idempay.StatePending, "pi_1"
			r = apply(t, s, "durable Resolve to pending by the holder", r, toPending)
			done := durable(resolution(r, idempay.StateSucceeded))
			done.Result = []byte(`{"status":"succeeded"}`)
			r = apply(t, s, "durable Resolve to succeeded", r, done)
			for _, state := range allStates {
				if err := s.Resolve(t.Context(), durable(resolution(r, state))); !errors.Is(err, idempay.ErrAlreadyResolved) {
					t.Errorf("durable Resolve of a succeeded record to %s = %v; want ErrAlreadyResolved", state, err)
				}
			}
			checkStored(t, s, "durable Resolves of a closed record must not change it", r)
		},
	}, {
		name: "Resolve/a state that is not one of the four is refused",
		rule: "Resolve with a State that is not open, pending, succeeded or failed returns an error and changes nothing: a record in no known state would be neither listed as open nor answered as settled",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			for _, state := range []idempay.State{"", "settled", "SUCCEEDED"} {
				res := resolution(r, state)
				res.Result = []byte("x")
				if err := s.Resolve(t.Context(), res); err == nil {
					t.Errorf("Resolve to state %q returned no error", state)
				}
			}
			checkStored(t, s, "Resolves to invalid states must not change the record", r)
		},
	}}
}
