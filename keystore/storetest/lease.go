package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// before reports whether a is before b at the precision stores keep.
func before(a, b time.Time) bool { return a.Truncate(us).Before(b.Truncate(us)) }

func leaseCases() []testCase {
	return []testCase{{
		name: "Lease/another owner is refused while the lease runs",
		rule: "Reserve by another owner, with the record's fingerprint, while Now is before LeaseUntil returns Claimed false and leaves the record unchanged: only one flight may send at a time",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, request("order-1", "owner-a")).Record
			for _, owner := range []string{"owner-b", "owner-c", "owner-b"} {
				got := reserve(t, s, request("order-1", owner))
				checkReply(t, "Reserve by "+owner+" while owner-a holds the lease until "+fmtTime(a.LeaseUntil), got, false, false)
				if !before(got.Now, got.Record.LeaseUntil) {
					t.Errorf("the refusal's Now %s is not before the returned LeaseUntil %s", fmtTime(got.Now), fmtTime(got.Record.LeaseUntil))
				}
				checkRecord(t, "a refused claim must return the record unchanged", got.Record, a)
			}
			checkStored(t, s, "a refused claim must not change the record", a)
		},
	}, {
		name:     "Lease/another owner claims once the lease has run out",
		rule:     "Reserve by another owner with the record's fingerprint once Now is past LeaseUntil returns Claimed (not Created) and stores its lease: LeaseOwner r.Owner, LeaseUntil = Now + r.Lease, UpdatedAt = Now, keeping the key, CreatedAt and Creator; the previous owner is then refused",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, withLease(request("order-1", "owner-a"), shortLease)).Record
			sleepPast(a.LeaseUntil)
			b := request("order-1", "owner-b")
			got := reserve(t, s, b)
			checkReply(t, "Reserve by owner-b after owner-a's lease ran out at "+fmtTime(a.LeaseUntil), got, false, true)
			want := claimed(a, b, got.Now)
			checkRecord(t, "a takeover returns the stored record with the new lease and the original key", got.Record, want)
			checkStored(t, s, "a takeover must store the new lease", want)

			back := reserve(t, s, request("order-1", "owner-a"))
			checkReply(t, "Reserve by owner-a after owner-b took its lease over", back, false, false)
			checkStored(t, s, "a refused claim by the previous owner must not change the record", want)
		},
	}, {
		name:     "Lease/the lease is free from LeaseUntil on, not later",
		rule:     "A lease runs out on the store's clock at LeaseUntil exactly: Reserve by another owner is refused only while Now < LeaseUntil and claims as soon as Now ≥ LeaseUntil (polled through the end of many short leases, every refusal's Now is before the stored LeaseUntil and the claim's Now is not)",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			// Polling through the end of one lease lands on LeaseUntil
			// itself only if calls take a few microseconds; the leases
			// are short, so that many are polled, and the loop goes on
			// until a call landed on LeaseUntil a few times or the
			// budget is spent, so that a slower store is still checked
			// at every instant it answered.
			const lease = 500 * time.Microsecond
			budget := time.Now().Add(400 * time.Millisecond)
			onTheDot := 0
			for i := 0; onTheDot < 3 && time.Now().Before(budget); i++ {
				id := fmt.Sprintf("order-%d", i)
				a := reserve(t, s, withLease(request(id, "owner-a"), lease)).Record
				b := request(id, "owner-b")
				giveUp := time.Now().Add(lease + time.Second)
				for {
					got, err := s.Reserve(t.Context(), b)
					if err != nil {
						t.Fatalf("Reserve of %q by owner-b = %v; want no error", id, err)
					}
					if got.Claimed {
						if before(got.Now, a.LeaseUntil) {
							t.Fatalf("Reserve of %q by owner-b claimed at Now %s, before owner-a's LeaseUntil %s", id, fmtTime(got.Now), fmtTime(a.LeaseUntil))
						}
						if sameTime(got.Now, a.LeaseUntil) {
							onTheDot++
						}
						break
					}
					if !before(got.Now, got.Record.LeaseUntil) {
						t.Fatalf("Reserve of %q by owner-b refused at Now %s, not before the stored LeaseUntil %s: the lease was over (LeaseOwner %q)",
							id, fmtTime(got.Now), fmtTime(got.Record.LeaseUntil), got.Record.LeaseOwner)
					}
					if time.Now().After(giveUp) {
						t.Fatalf("Reserve of %q by owner-b still refused a second after a %s lease began", id, lease)
					}
				}
			}
		},
	}, {
		name:     "Lease/the holder renews its lease to Now+Lease",
		rule:     "Reserve by the owner that holds the lease, with the record's fingerprint, returns Claimed and moves LeaseUntil to Now + r.Lease and UpdatedAt to Now, keeping CreatedAt: a heartbeat keeps a short lease alive, and another owner stays refused past the first lease's end",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			r := withLease(request("order-1", "owner-a"), shortLease)
			first := reserve(t, s, r).Record
			want := first
			for _, lease := range []time.Duration{longLease, 2 * longLease} {
				r.Lease = lease
				got := reserve(t, s, r)
				if !got.Claimed {
					t.Fatalf("renewal by the holder for %s: Claimed = false; want true", lease)
				}
				want = claimed(want, r, got.Now)
				checkRecord(t, fmt.Sprintf("a renewal for %s returns the record with LeaseUntil = Now + %s", lease, lease), got.Record, want)
				checkStored(t, s, "a renewal must store the new LeaseUntil", want)
			}
			sleepPast(first.LeaseUntil)
			got := reserve(t, s, request("order-1", "owner-b"))
			checkReply(t, "Reserve by owner-b after the first lease's end, inside the renewed one", got, false, false)
			checkStored(t, s, "a refused claim must not change a renewed lease", want)
		},
	}, {
		name: "Lease/a released lease is claimable at once",
		rule: "After the holder released its lease (Resolve with State Open), Reserve by any owner with the record's fingerprint returns Claimed, long before the old LeaseUntil",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, request("order-1", "owner-a")).Record
			want := apply(t, s, "release by the holder", a, release(a, "owner-a"))
			b := request("order-1", "owner-b")
			got := reserve(t, s, b)
			checkReply(t, "Reserve by owner-b after owner-a released (old LeaseUntil "+fmtTime(a.LeaseUntil)+")", got, false, true)
			want = claimed(want, b, got.Now)
			checkRecord(t, "a claim of a released record keeps its key", got.Record, want)
			checkStored(t, s, "a claim of a released record", want)
		},
	}, {
		name:     "Lease/a claim needs the stored fingerprint",
		rule:     "Reserve with a fingerprint other than the stored one never takes the lease of an open or pending record, even a free one (released or run out) and even for the owner holding it: a request with other parameters must not send under this key",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			other := func(id, owner string) idempay.ReserveRequest {
				r := request(id, owner)
				r.Fingerprint = "fp-other-card"
				return r
			}
			refused := func(what string, r idempay.ReserveRequest, want idempay.Record) {
				t.Helper()
				got := reserve(t, s, r)
				checkReply(t, what, got, false, false)
				checkRecord(t, what+" must return the record unchanged", got.Record, want)
				checkStored(t, s, what+" must not change the record", want)
			}
			held := reserve(t, s, request("order-1", "owner-a")).Record
			refused("Reserve with other parameters by the holder of the lease", other("order-1", "owner-a"), held)
			free := apply(t, s, "release", held, release(held, "owner-a"))
			refused("Reserve with other parameters by the previous holder of a released lease", other("order-1", "owner-a"), free)
			refused("Reserve with other parameters by another owner of a released lease", other("order-1", "owner-b"), free)

			p := reserve(t, s, request("order-2", "owner-a")).Record
			toPending := release(p, "owner-a")
			toPending.State = idempay.StatePending
			pending := apply(t, s, "release as pending", p, toPending)
			refused("Reserve with other parameters of a released pending record", other("order-2", "owner-b"), pending)

			out := reserve(t, s, withLease(request("order-3", "owner-a"), shortLease)).Record
			sleepPast(out.LeaseUntil)
			refused("Reserve with other parameters of a lease that ran out", other("order-3", "owner-b"), out)

			// The refusals were for the fingerprint alone.
			for _, id := range []string{"order-1", "order-2", "order-3"} {
				if got := reserve(t, s, request(id, "owner-b")); !got.Claimed {
					t.Errorf("Reserve of %q by owner-b with the stored fingerprint: Claimed = false; want true, the lease is free", id)
				}
			}
		},
	}, {
		name:     "Lease/a pending record is claimed like an open one",
		rule:     "A pending record's lease is taken like an open record's: by any owner with its fingerprint once released or run out, never by another owner before LeaseUntil; the claim keeps the state pending, the ProviderRef and the Result",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, request("order-1", "owner-a")).Record
			toPending := release(r, "owner-a")
			toPending.State = idempay.StatePending
			toPending.ProviderRef = "pi_3DS"
			toPending.Result = []byte(`{"status":"requires_action"}`)
			want := apply(t, s, "Resolve to pending", r, toPending)

			b := withLease(request("order-1", "owner-b"), shortLease)
			got := reserve(t, s, b)
			checkReply(t, "Reserve by owner-b of a pending record with a released lease", got, false, true)
			want = claimed(want, b, got.Now)
			checkRecord(t, "a claim of a pending record keeps it pending with its key, ProviderRef and Result", got.Record, want)
			checkStored(t, s, "a claim of a pending record", want)

			c := request("order-1", "owner-c")
			got = reserve(t, s, c)
			if got.Claimed && before(got.Now, want.LeaseUntil) {
				t.Errorf("Reserve by owner-c of a pending record leased to owner-b until %s, at %s: Claimed = true; want false", fmtTime(want.LeaseUntil), fmtTime(got.Now))
			}
			sleepPast(want.LeaseUntil)
			got = reserve(t, s, c)
			checkReply(t, "Reserve by owner-c of a pending record whose lease ran out", got, false, true)
			checkRecord(t, "a takeover of a pending record", got.Record, claimed(want, c, got.Now))
		},
	}, {
		name:     "Lease/a closed record is never claimed",
		rule:     "Reserve on a succeeded or failed record returns neither Created nor Claimed and the record unchanged, whoever asks (its creator with its own key, another owner) with its fingerprint, after its lease would have run out: its outcome is known and nothing may be sent",
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			var closed []idempay.Record
			for _, state := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
				id := "order-" + string(state)
				r := reserve(t, s, withLease(request(id, "owner-a"), shortLease)).Record
				res := resolution(r, state)
				res.ProviderRef, res.Result = "ch_1", []byte("outcome")
				closed = append(closed, apply(t, s, "Resolve to "+string(state), r, res))
			}
			sleepPast(closed[len(closed)-1].CreatedAt.Add(shortLease))
			for _, rec := range closed {
				for _, r := range []idempay.ReserveRequest{request(rec.ID, "owner-a"), request(rec.ID, "owner-b")} {
					got := reserve(t, s, r)
					checkReply(t, fmt.Sprintf("Reserve of a %s record by %s", rec.State, r.Owner), got, false, false)
					checkRecord(t, "Reserve of a "+string(rec.State)+" record must return it unchanged", got.Record, rec)
				}
				checkStored(t, s, "Reserve must not change a "+string(rec.State)+" record", rec)
			}
		},
	}}
}
