package storetest

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
)

// releaseCases check Resolution.LeaseOwner: who may give a lease back.
func releaseCases() []testCase {
	return []testCase{{
		name: "Lease/release by the holder's owner frees the lease",
		rule: "Resolve with State Open and LeaseOwner set to the owner holding the lease releases it: the state stays, LeaseOwner and LeaseUntil are cleared, UpdatedAt is stamped, and another owner may claim at once",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, request("order-1", "owner-a")).Record
			apply(t, s, "after a release by the lease holder", a, release(a, "owner-a"))
			if got := reserve(t, s, request("order-1", "owner-b")); !got.Claimed {
				t.Error("Reserve by owner-b after owner-a released its own lease: Claimed = false; want true")
			}
		},
	}, {
		name: "Lease/release by another owner returns ErrLeaseLost and changes nothing",
		rule: "Resolve with LeaseOwner set to an owner that does not hold the lease (another owner holds it, or nobody does since a release) returns an error matching ErrLeaseLost and leaves the record, lease included, unchanged, whatever the state asked",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, request("order-1", "owner-a")).Record
			for _, state := range []idempay.State{idempay.StateOpen, idempay.StatePending, idempay.StateSucceeded, idempay.StateFailed} {
				res := release(a, "owner-b")
				res.State, res.ProviderRef, res.Result = state, "ch_wrong", []byte("wrong")
				if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrLeaseLost) {
					t.Errorf("Resolve to %s by owner-b while owner-a holds the lease = %v; want ErrLeaseLost", state, err)
				}
			}
			checkStored(t, s, "Resolve by an owner not holding the lease must not change the record", a)

			// Released: nobody holds the lease, so nobody may release it.
			want := apply(t, s, "release with no owner named", a, resolution(a, idempay.StateOpen))
			if err := s.Resolve(t.Context(), release(a, "owner-a")); !errors.Is(err, idempay.ErrLeaseLost) {
				t.Errorf("release by owner-a of a lease already released = %v; want ErrLeaseLost", err)
			}
			checkStored(t, s, "a release of a released lease must not change the record", want)
		},
	}, {
		name:     "Lease/a late release after a takeover keeps the new holder's lease",
		rule:     "When owner-a's lease ran out and owner-b claimed the record, a release by owner-a (LeaseOwner owner-a) returns ErrLeaseLost and owner-b keeps its lease: a third owner is still refused",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, withLease(request("order-1", "owner-a"), shortLease)).Record
			sleepPast(a.LeaseUntil)
			b := request("order-1", "owner-b")
			got := reserve(t, s, b)
			if !got.Claimed {
				t.Fatal("Reserve by owner-b after owner-a's lease ran out: Claimed = false; want true")
			}
			want := claimed(a, b, got.Now)

			if err := s.Resolve(t.Context(), release(a, "owner-a")); !errors.Is(err, idempay.ErrLeaseLost) {
				t.Errorf("late release by owner-a after owner-b took over = %v; want ErrLeaseLost", err)
			}
			checkStored(t, s, "a late release by the previous holder must leave the new holder's lease", want)
			if got := reserve(t, s, request("order-1", "owner-c")); got.Claimed {
				t.Error("Reserve by owner-c inside owner-b's lease, after owner-a's late release: Claimed = true; want false: two owners could send at once")
			}
		},
	}, {
		name: "Lease/an empty LeaseOwner skips the owner check",
		rule: "Resolve with an empty LeaseOwner does not check who holds the lease: it records the outcome and clears the lease while an owner holds it, and when none does (a known outcome is a fact whoever holds the lease)",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, request("order-1", "owner-a")).Record
			toPending := resolution(a, idempay.StatePending)
			toPending.ProviderRef = "pi_3DS"
			want := apply(t, s, "Resolve to pending with no LeaseOwner while owner-a holds the lease", a, toPending)

			done := resolution(a, idempay.StateSucceeded)
			done.Result = []byte("ok")
			apply(t, s, "Resolve to succeeded with no LeaseOwner and no lease held", want, done)
		},
	}}
}
