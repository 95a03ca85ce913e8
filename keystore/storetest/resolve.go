package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// resolved is the record after res was applied to stored: the state (unless
// res only releases the lease), ProviderRef and Result when given, UpdatedAt
// from res.At, and no lease.
func resolved(stored idempay.Record, res idempay.Resolution) idempay.Record {
	if res.State != idempay.StateOpen {
		stored.State = res.State
	}
	if res.ProviderRef != "" {
		stored.ProviderRef = res.ProviderRef
	}
	if res.Result != nil {
		stored.Result = res.Result
	}
	stored.UpdatedAt = res.At
	stored.LeaseOwner = ""
	stored.LeaseUntil = time.Time{}
	return stored
}

// allBytes is a Result no text encoding survives: every byte value, then
// sequences that are invalid UTF-8 (a lone continuation byte, a truncated
// sequence, an overlong NUL, a surrogate).
func allBytes() []byte {
	b := make([]byte, 0, 256+10)
	for i := range 256 {
		b = append(b, byte(i))
	}
	return append(b, 0x80, 0xe2, 0x82, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xff, 0x00)
}

func resolveCases() []testCase {
	return []testCase{{
		name: "Resolve/missing record returns ErrNotFound",
		rule: "Resolve of an intent with no record returns an error matching ErrNotFound and creates nothing",
		run: func(t *testing.T, s idempay.KeyStore) {
			res := resolution(newRecord("ns", "order-1", "key-1", "", t0), idempay.StateSucceeded, t0)
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
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			for _, state := range []idempay.State{idempay.StateOpen, idempay.StatePending, idempay.StateSucceeded, idempay.StateFailed} {
				res := resolution(r, state, t0.Add(time.Second))
				res.Key = "key-2"
				res.ProviderRef = "ch_wrong"
				res.Result = []byte("wrong")
				if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrKeyMismatch) {
					t.Errorf("Resolve to %s with another key = %v; want ErrKeyMismatch", state, err)
				}
			}
			checkStored(t, s, "Resolve with another key must not change the record", r)
		},
	}, {
		name: "Resolve/closed record returns ErrAlreadyResolved and changes nothing",
		rule: "Resolve of a succeeded or failed record returns an error matching ErrAlreadyResolved and leaves the record unchanged: a known outcome is final",
		run: func(t *testing.T, s idempay.KeyStore) {
			for _, final := range []idempay.State{idempay.StateSucceeded, idempay.StateFailed} {
				id := "order-" + string(final)
				r := reserve(t, s, newRecord("ns", id, "key-1", "owner", t0)).Record
				first := resolution(r, final, t0.Add(time.Second))
				first.ProviderRef = "ch_1"
				first.Result = []byte("first")
				resolve(t, s, first)
				want := resolved(r, first)
				for _, state := range []idempay.State{idempay.StateOpen, idempay.StatePending, idempay.StateSucceeded, idempay.StateFailed} {
					res := resolution(r, state, t0.Add(2*time.Second))
					res.ProviderRef = "ch_2"
					res.Result = []byte("second")
					if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrAlreadyResolved) {
						t.Errorf("Resolve of a %s record to %s = %v; want ErrAlreadyResolved", final, state, err)
					}
				}
				checkStored(t, s, "Resolve of a "+string(final)+" record must not change it", want)
			}
		},
	}, {
		name: "Resolve/open to pending to succeeded",
		rule: "Resolve moves an open record to pending and a pending one to succeeded; each Resolve sets UpdatedAt to res.At and releases the lease",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			pending := resolution(r, idempay.StatePending, t0.Add(time.Second))
			pending.ProviderRef = "pi_3DS"
			resolve(t, s, pending)
			want := resolved(r, pending)
			checkStored(t, s, "after Resolve to pending", want)

			done := resolution(r, idempay.StateSucceeded, t0.Add(2*time.Second))
			done.Result = []byte(`{"id":"pi_3DS","status":"succeeded"}`)
			resolve(t, s, done)
			checkStored(t, s, "after Resolve from pending to succeeded", resolved(want, done))
		},
	}, {
		name: "Resolve/open or pending to failed",
		rule: "Resolve moves an open or a pending record to failed, sets UpdatedAt to res.At and releases the lease",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			fail := resolution(r, idempay.StateFailed, t0.Add(time.Second))
			fail.Result = []byte(`{"decline_code":"insufficient_funds"}`)
			resolve(t, s, fail)
			checkStored(t, s, "after Resolve from open to failed", resolved(r, fail))

			p := reserve(t, s, newRecord("ns", "order-2", "key-2", "owner", t0)).Record
			resolve(t, s, resolution(p, idempay.StatePending, t0.Add(time.Second)))
			fail = resolution(p, idempay.StateFailed, t0.Add(2*time.Second))
			resolve(t, s, fail)
			checkStored(t, s, "after Resolve from pending to failed",
				resolved(resolved(p, resolution(p, idempay.StatePending, t0.Add(time.Second))), fail))
		},
	}, {
		name: "Resolve/State Open only releases the lease",
		rule: "Resolve with State Open keeps the record's state (open stays open, pending stays pending), clears LeaseOwner and LeaseUntil and sets UpdatedAt",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			release := resolution(r, idempay.StateOpen, t0.Add(time.Second))
			resolve(t, s, release)
			got := load(t, s, "ns", "order-1")
			checkRecord(t, "after Resolve with State Open on an open record", got, resolved(r, release))
			if got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
				t.Errorf("after release: LeaseOwner %q LeaseUntil %s; want empty and the zero time", got.LeaseOwner, fmtTime(got.LeaseUntil))
			}

			p := reserve(t, s, newRecord("ns", "order-2", "key-2", "owner", t0)).Record
			toPending := resolution(p, idempay.StatePending, t0.Add(time.Second))
			resolve(t, s, toPending)
			// The pending record is claimed again by its owner, then
			// released: the release must not turn it back into open.
			reserve(t, s, newRecord("ns", "order-2", "key-2", "owner", t0.Add(2*time.Second)))
			release = resolution(p, idempay.StateOpen, t0.Add(3*time.Second))
			resolve(t, s, release)
			checkStored(t, s, "after Resolve with State Open on a pending record", resolved(resolved(p, toPending), release))
		},
	}, {
		name: "Resolve/empty ProviderRef and nil Result keep the stored ones",
		rule: "Resolve keeps the stored ProviderRef when res.ProviderRef is empty and the stored Result when res.Result is nil, and replaces them otherwise (a non-nil empty Result replaces)",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			steps := []idempay.Resolution{
				{State: idempay.StatePending, ProviderRef: "ch_1", Result: []byte("r1")},
				{State: idempay.StateOpen},                                             // keeps both
				{State: idempay.StatePending, ProviderRef: "ch_2"},                     // replaces the ref only
				{State: idempay.StatePending, Result: []byte("r2")},                    // replaces the result only
				{State: idempay.StateSucceeded, ProviderRef: "ch_3", Result: []byte{}}, // replaces both
			}
			want := r
			for i, step := range steps {
				step.Namespace, step.IntentID, step.Key = r.Namespace, r.IntentID, r.Key
				step.At = t0.Add(time.Duration(i+1) * time.Second)
				resolve(t, s, step)
				want = resolved(want, step)
				got := load(t, s, "ns", "order-1")
				checkRecord(t, fmt.Sprintf("after Resolve step %d (%+v)", i+1, step), got, want)
			}
		},
	}, {
		name: "Resolve/Result bytes round-trip exactly",
		rule: "The Result bytes written by Resolve are read back byte for byte, whatever they are (not text, not valid UTF-8)",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			res := resolution(r, idempay.StateSucceeded, t0.Add(time.Second))
			res.Result = allBytes()
			resolve(t, s, res)
			checkStored(t, s, "binary Result", resolved(r, res))
		},
	}, {
		name: "Resolve/Result is copied in and out",
		rule: "A store keeps its own copy of Result: changing the slice given to Resolve, or the one returned by Load, afterwards does not change the stored record",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			res := resolution(r, idempay.StateSucceeded, t0.Add(time.Second))
			res.Result = []byte("original")
			resolve(t, s, res)
			want := resolved(r, res)
			want.Result = []byte("original")

			copy(res.Result, "CHANGED!")
			checkStored(t, s, "after the caller changed the slice it gave to Resolve", want)
			got := load(t, s, "ns", "order-1")
			copy(got.Result, "CHANGED!")
			checkStored(t, s, "after the caller changed the slice Load returned", want)
		},
	}, {
		name: "Resolve/errors come in order: not found, key, closed, then lease owner",
		rule: "With a LeaseOwner that does not hold the lease, Resolve still returns ErrNotFound for a missing record, ErrKeyMismatch for another key and ErrAlreadyResolved for a closed record: the owner is checked last",
		run: func(t *testing.T, s idempay.KeyStore) {
			missing := resolution(newRecord("ns", "order-0", "key-0", "", t0), idempay.StateOpen, t0)
			missing.LeaseOwner = "owner-b"
			if err := s.Resolve(t.Context(), missing); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Resolve of a missing record by a non-holder = %v; want ErrNotFound", err)
			}

			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner-a", t0)).Record
			res := resolution(r, idempay.StateOpen, t0.Add(time.Second))
			res.Key, res.LeaseOwner = "key-2", "owner-b"
			if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrKeyMismatch) {
				t.Errorf("Resolve with another key by a non-holder = %v; want ErrKeyMismatch", err)
			}
			checkStored(t, s, "a refused Resolve must not change the record", r)

			done := resolution(r, idempay.StateSucceeded, t0.Add(2*time.Second))
			resolve(t, s, done)
			res = resolution(r, idempay.StateOpen, t0.Add(3*time.Second))
			res.LeaseOwner = "owner-a" // held the lease until the record was closed
			if err := s.Resolve(t.Context(), res); !errors.Is(err, idempay.ErrAlreadyResolved) {
				t.Errorf("release of a closed record by its former holder = %v; want ErrAlreadyResolved", err)
			}
			checkStored(t, s, "a refused Resolve must not change a closed record", resolved(r, done))
		},
	}}
}
