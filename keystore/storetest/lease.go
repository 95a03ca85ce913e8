package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// claimed is the record after a successful claim of stored by claim: the
// lease and UpdatedAt come from the claim, everything else stays.
func claimed(stored, claim idempay.Record) idempay.Record {
	stored.LeaseOwner = claim.LeaseOwner
	stored.LeaseUntil = claim.LeaseUntil
	stored.UpdatedAt = claim.UpdatedAt
	return stored
}

func leaseCases() []testCase {
	return []testCase{{
		name: "Lease/another owner is refused before the lease ends",
		rule: "Reserve by another owner at an UpdatedAt before LeaseUntil returns Claimed false and leaves the record unchanged: only one instance may send at a time",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			b := newRecord("ns", "order-1", "key-b", "owner-b", a.LeaseUntil.Add(-us))
			got := reserve(t, s, b)
			if got.Claimed || got.Created {
				t.Errorf("Reserve by owner-b 1µs before owner-a's lease ends: Claimed=%v Created=%v; want both false", got.Claimed, got.Created)
			}
			checkRecord(t, "a refused claim must return the record unchanged", got.Record, a)
			checkStored(t, s, "a refused claim must not change the record", a)
		},
	}, {
		name: "Lease/another owner claims once the lease has ended",
		rule: "Reserve by another owner at an UpdatedAt at or after LeaseUntil returns Claimed true and stores its LeaseOwner, LeaseUntil and UpdatedAt, keeping the key; the previous owner is then refused",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			// Exactly at LeaseUntil: the lease is "free after this
			// instant" is read as expired at it, so a crashed owner
			// is taken over without an extra tick.
			b := newRecord("ns", "order-1", "key-b", "owner-b", a.LeaseUntil)
			got := reserve(t, s, b)
			if !got.Claimed || got.Created {
				t.Errorf("Reserve by owner-b at owner-a's LeaseUntil: Claimed=%v Created=%v; want Claimed true, Created false", got.Claimed, got.Created)
			}
			want := claimed(a, b)
			checkRecord(t, "a successful claim returns the stored record with the new lease and the original key", got.Record, want)
			checkStored(t, s, "a successful claim must store the new lease", want)

			back := newRecord("ns", "order-1", "key-a", "owner-a", b.UpdatedAt.Add(time.Second))
			if got := reserve(t, s, back); got.Claimed {
				t.Error("Reserve by owner-a while owner-b holds the lease: Claimed = true; want false")
			}

			later := newRecord("ns", "order-1", "key-c", "owner-c", b.LeaseUntil.Add(time.Second))
			got = reserve(t, s, later)
			if !got.Claimed {
				t.Error("Reserve by owner-c after owner-b's lease ended: Claimed = false; want true")
			}
			checkRecord(t, "a claim after an expired lease", got.Record, claimed(want, later))
		},
	}, {
		name: "Lease/the holder claims its own lease again",
		rule: "Reserve by the owner that holds the lease returns Claimed true and moves LeaseUntil and UpdatedAt to the new values: a retry by the same instance may extend its lease",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			again := newRecord("ns", "order-1", "key-other", "owner-a", t0.Add(10*time.Second))
			got := reserve(t, s, again)
			if !got.Claimed || got.Created {
				t.Errorf("Reserve by the lease holder: Claimed=%v Created=%v; want Claimed true, Created false", got.Claimed, got.Created)
			}
			want := claimed(a, again)
			checkRecord(t, "the holder's claim returns the record with its extended lease", got.Record, want)
			checkStored(t, s, "the holder's claim must store the extended lease", want)
		},
	}, {
		name: "Lease/a released lease is claimable at once",
		rule: "After Resolve with State Open released the lease, Reserve by any owner returns Claimed true, even before the old LeaseUntil",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			resolve(t, s, resolution(a, idempay.StateOpen, t0.Add(time.Second)))
			b := newRecord("ns", "order-1", "key-b", "owner-b", t0.Add(2*time.Second))
			got := reserve(t, s, b)
			if !got.Claimed {
				t.Errorf("Reserve by owner-b after owner-a released its lease (old LeaseUntil %s): Claimed = false; want true",
					fmtTime(a.LeaseUntil))
			}
			if got.Record.Key != "key-a" || got.Record.LeaseOwner != "owner-b" {
				t.Errorf("claim of a released record: key %q owner %q; want key %q owner %q",
					got.Record.Key, got.Record.LeaseOwner, "key-a", "owner-b")
			}
		},
	}, {
		name: "Lease/a pending record is claimed like an open one",
		rule: "A pending record's lease is taken like an open record's: by any owner once released or expired, never from another owner before LeaseUntil; the claim keeps the state pending",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner-a", t0)).Record
			toPending := resolution(r, idempay.StatePending, t0.Add(time.Second))
			toPending.ProviderRef = "pi_3DS"
			resolve(t, s, toPending)
			pending := resolved(r, toPending)

			b := newRecord("ns", "order-1", "key-b", "owner-b", t0.Add(2*time.Second))
			got := reserve(t, s, b)
			if !got.Claimed || got.Created {
				t.Errorf("Reserve by owner-b of a pending record with a released lease: Claimed=%v Created=%v; want Claimed true, Created false",
					got.Claimed, got.Created)
			}
			want := claimed(pending, b)
			checkRecord(t, "a claim of a pending record keeps it pending with its key and ProviderRef", got.Record, want)
			checkStored(t, s, "a claim of a pending record", want)

			c := newRecord("ns", "order-1", "key-c", "owner-c", b.LeaseUntil.Add(-us))
			if got := reserve(t, s, c); got.Claimed {
				t.Error("Reserve by owner-c of a pending record leased to owner-b, before its LeaseUntil: Claimed = true; want false")
			}
			checkStored(t, s, "a refused claim of a pending record must not change it", want)
		},
	}, {
		name: "Lease/a closed record is never claimed",
		rule: "Reserve on a succeeded or failed record returns Claimed false and the record unchanged, whoever asks and however late: its outcome is known and nothing may be sent",
		run: func(t *testing.T, s idempay.KeyStore) {
			for _, state := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
				id := "order-" + string(state)
				r := reserve(t, s, newRecord("ns", id, "key-1", "owner-a", t0)).Record
				resolve(t, s, resolution(r, state, t0.Add(time.Second)))
				closed := load(t, s, "ns", id)
				for _, owner := range []string{"owner-a", "owner-b"} {
					for _, at := range []time.Time{t0.Add(2 * time.Second), t0.Add(1000 * time.Hour)} {
						got := reserve(t, s, newRecord("ns", id, "key-2", owner, at))
						if got.Claimed || got.Created {
							t.Errorf("Reserve of a %s record by %s at %s: Claimed=%v Created=%v; want both false",
								state, owner, fmtTime(at), got.Claimed, got.Created)
						}
						checkRecord(t, "Reserve of a "+string(state)+" record must return it unchanged", got.Record, closed)
					}
				}
				checkStored(t, s, "Reserve must not change a "+string(state)+" record", closed)
			}
		},
	}, {
		name: "Lease/release by the holder's owner frees the lease",
		rule: "Resolve with State Open and LeaseOwner set to the owner holding the lease releases it like a release with no owner: the state stays, LeaseOwner and LeaseUntil are cleared, UpdatedAt is set, and another owner may claim at once",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			release := resolution(a, idempay.StateOpen, t0.Add(time.Second))
			release.LeaseOwner = "owner-a"
			resolve(t, s, release)
			checkStored(t, s, "after a release by the lease holder", resolved(a, release))

			b := newRecord("ns", "order-1", "key-b", "owner-b", t0.Add(2*time.Second))
			if got := reserve(t, s, b); !got.Claimed {
				t.Error("Reserve by owner-b after owner-a released its own lease: Claimed = false; want true")
			}
		},
	}, {
		name: "Lease/release by another owner returns ErrLeaseLost and changes nothing",
		rule: "Resolve with LeaseOwner set to an owner that does not hold the lease (another owner holds it, or nobody does since a release) returns an error matching ErrLeaseLost and leaves the record, lease included, unchanged, whatever the state asked",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			for _, state := range []idempay.State{idempay.StateOpen, idempay.StatePending, idempay.StateSucceeded, idempay.StateFailed} {
				res := resolution(a, state, t0.Add(time.Second))
				res.LeaseOwner = "owner-b"
				res.ProviderRef = "ch_wrong"
				res.Result = []byte("wrong")
				if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrLeaseLost) {
					t.Errorf("Resolve to %s by owner-b while owner-a holds the lease = %v; want ErrLeaseLost", state, err)
				}
			}
			checkStored(t, s, "Resolve by an owner not holding the lease must not change the record", a)

			// Released: nobody holds the lease, so nobody may release it.
			free := resolution(a, idempay.StateOpen, t0.Add(2*time.Second))
			resolve(t, s, free)
			want := resolved(a, free)
			res := resolution(a, idempay.StateOpen, t0.Add(3*time.Second))
			res.LeaseOwner = "owner-a"
			if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrLeaseLost) {
				t.Errorf("release by owner-a of a lease already released = %v; want ErrLeaseLost", err)
			}
			checkStored(t, s, "a release of a released lease must not change the record", want)
		},
	}, {
		name: "Lease/a late release after a takeover keeps the new holder's lease",
		rule: "When owner-a's lease ran out and owner-b claimed the record, a release by owner-a (LeaseOwner owner-a) returns ErrLeaseLost and owner-b keeps its lease: a third owner is still refused until owner-b's LeaseUntil",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			b := newRecord("ns", "order-1", "key-b", "owner-b", a.LeaseUntil)
			if got := reserve(t, s, b); !got.Claimed {
				t.Fatal("Reserve by owner-b at owner-a's LeaseUntil: Claimed = false; want true")
			}
			want := claimed(a, b)

			late := resolution(a, idempay.StateOpen, b.UpdatedAt.Add(time.Second))
			late.LeaseOwner = "owner-a"
			if err := s.Resolve(t.Context(), late); !errors.Is(err, idempay.ErrLeaseLost) {
				t.Errorf("late release by owner-a after owner-b took over = %v; want ErrLeaseLost", err)
			}
			checkStored(t, s, "a late release by the previous holder must leave the new holder's lease", want)

			c := newRecord("ns", "order-1", "key-c", "owner-c", b.LeaseUntil.Add(-us))
			if got := reserve(t, s, c); got.Claimed {
				t.Error("Reserve by owner-c before owner-b's LeaseUntil, after owner-a's late release: Claimed = true; want false: two owners could send at once")
			}
		},
	}, {
		name: "Lease/an empty LeaseOwner skips the owner check",
		rule: "Resolve with an empty LeaseOwner does not check who holds the lease: it records the outcome and clears the lease even when another owner holds it (a known outcome is a fact whoever holds the lease)",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := reserve(t, s, newRecord("ns", "order-1", "key-a", "owner-a", t0)).Record
			b := newRecord("ns", "order-1", "key-b", "owner-b", a.LeaseUntil)
			reserve(t, s, b)
			held := claimed(a, b)

			toPending := resolution(a, idempay.StatePending, b.UpdatedAt.Add(time.Second))
			toPending.ProviderRef = "pi_3DS"
			resolve(t, s, toPending)
			want := resolved(held, toPending)
			checkStored(t, s, "Resolve to pending with no LeaseOwner while owner-b holds the lease", want)

			done := resolution(a, idempay.StateSucceeded, b.UpdatedAt.Add(2*time.Second))
			done.Result = []byte("ok")
			resolve(t, s, done)
			checkStored(t, s, "Resolve to succeeded with no LeaseOwner and no lease held", resolved(want, done))
		},
	}}
}
