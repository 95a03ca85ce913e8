package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func reserveCases() []testCase {
	return []testCase{{
		name: "Reserve/absent intent is inserted open, created and claimed, on the store's clock",
		rule: "Reserve on an intent with no record inserts it as attempt r.Attempt, open, with r's key and fingerprint, Creator and LeaseOwner r.Owner, CreatedAt = UpdatedAt = Now (the store's clock during the call), LeaseUntil = Now + r.Lease, no ClosedAt, outcome or history, and returns it with Created and Claimed",
		run: func(t *testing.T, s idempay.KeyStore) {
			for _, r := range []idempay.ReserveRequest{
				request("order-1", "owner-a"),
				// An intent whose record was expired may come back
				// at a later attempt; a lease of an odd length shows
				// a store that rounds it.
				{Namespace: "ns", ID: "order-2", Attempt: 3, Key: "key-2", Fingerprint: "fp-2", Owner: "owner-b", Lease: 1234567 * us},
			} {
				got := reserve(t, s, r)
				checkReply(t, fmt.Sprintf("first Reserve of %q", r.ID), got, true, true)
				want := inserted(r, got.Now)
				checkRecord(t, "first Reserve must return the record it inserted", got.Record, want)
				checkStored(t, s, "first Reserve must store the record it returned", want)
			}
		},
	}, {
		name: "Reserve/Unsent changes what is stored in nothing",
		rule: "Reserve with Unsent (a store that keeps its writes in order may answer before it is durable; others ignore it) inserts, claims and refuses exactly as without it",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := request("order-1", "owner-a")
			r.Unsent = true
			got := reserve(t, s, r)
			checkReply(t, "an Unsent Reserve of an absent intent", got, true, true)
			want := inserted(r, got.Now)
			checkRecord(t, "an Unsent Reserve must return the record it inserted", got.Record, want)
			checkStored(t, s, "an Unsent Reserve must store the record it returned", want)
			other := request("order-1", "owner-b")
			other.Unsent = true
			refused := reserve(t, s, other)
			checkReply(t, "an Unsent Reserve by another owner inside the lease", refused, false, false)
			checkRecord(t, "a refused Unsent Reserve must return the stored record unchanged", refused.Record, want)
		},
	}, {
		name: "Reserve/existing intent keeps the first record",
		rule: "Reserve on an intent whose record another owner holds returns the stored record unchanged (its key, fingerprint, CreatedAt and lease, not the caller's), with Created and Claimed false and Now the store's clock",
		run: func(t *testing.T, s idempay.KeyStore) {
			first := reserve(t, s, request("order-1", "owner-a")).Record
			// Another instance, inside owner-a's lease, with the same
			// parameters and with others: it must learn the first
			// key and must not be allowed to send.
			same := request("order-1", "owner-b")
			other := request("order-1", "owner-c")
			other.Fingerprint = "fp-other"
			for _, r := range []idempay.ReserveRequest{same, other} {
				got := reserve(t, s, r)
				checkReply(t, "Reserve by "+r.Owner+" while owner-a holds the lease until "+fmtTime(first.LeaseUntil), got, false, false)
				checkRecord(t, "a refused Reserve must return the stored record unchanged", got.Record, first)
			}
			checkStored(t, s, "a refused Reserve must leave the first record unchanged", first)
		},
	}, {
		name: "Reserve/a repeat by the creator reports Created again; another owner's does not",
		rule: "Reserve repeated with the Owner and Key (and Attempt) that inserted the record, as a client library resends it after losing the reply, returns Created and Claimed again and renews the lease, keeping CreatedAt; the same key from another owner never gets Created, whether refused or claiming; and a refused Reserve, even the creator's, never gets Created",
		run: func(t *testing.T, s idempay.KeyStore) {
			r := request("order-1", "owner-a")
			first := reserve(t, s, r).Record
			again := reserve(t, s, r)
			checkReply(t, "the creator's repeated Reserve", again, true, true)
			want := claimed(first, r, again.Now)
			checkRecord(t, "the creator's repeated Reserve renews its lease and keeps the record", again.Record, want)
			checkStored(t, s, "after the creator's repeated Reserve", want)

			// Another flight that somehow sends the same key.
			b := r
			b.Owner = "owner-b"
			checkReply(t, "Reserve with the creator's key by another owner, while the creator holds the lease", reserve(t, s, b), false, false)

			want = apply(t, s, "release by the creator", want, release(want, "owner-a"))
			got := reserve(t, s, b)
			checkReply(t, "Reserve with the creator's key by another owner, once released", got, false, true)
			want = claimed(want, b, got.Now)
			checkRecord(t, "another owner's claim", got.Record, want)

			// The creator, refused: it holds no lease, so it must not
			// take the key as new and act on it.
			got = reserve(t, s, r)
			checkReply(t, "the creator's repeated Reserve while another owner holds the lease", got, false, false)
			checkStored(t, s, "a refused Reserve by the creator", want)
		},
	}, {
		name: "Reserve/separator characters do not merge intents",
		rule: "Records are identified by the pair (Namespace, IntentID): namespaces and intent IDs containing ':', '/', '|' or spaces must not collide as they would if the store joined them into one string",
		run: func(t *testing.T, s idempay.KeyStore) {
			pairs := [][2]string{
				{"stripe:acct", "x"}, {"stripe", "acct:x"},
				{"omise/acct", "y"}, {"omise", "acct/y"},
				{"p|q", "z"}, {"p", "q|z"},
				{"n s", "id"}, {"n", "s id"},
				{"n", "id"}, {"ni", "d"},
			}
			for i, p := range pairs {
				r := request(p[1], "owner")
				r.Namespace, r.Key = p[0], fmt.Sprintf("key-%d", i)
				if got := reserve(t, s, r); !got.Created {
					t.Errorf("Reserve(%q, %q): Created = false; want true: no record exists for this pair (key seen %q)", p[0], p[1], got.Record.Key)
				}
			}
			for i, p := range pairs {
				if r, want := load(t, s, p[0], p[1]), fmt.Sprintf("key-%d", i); r.Key != want || r.Namespace != p[0] || r.ID != p[1] {
					t.Errorf("Load(%q, %q) = (%q, %q) key %q; want (%q, %q) key %q", p[0], p[1], r.Namespace, r.ID, r.Key, p[0], p[1], want)
				}
			}
		},
	}, {
		name: "Reserve/an invalid request is refused and stores nothing",
		rule: "Reserve of a request that idempay.CheckReserveRequest refuses (empty namespace, intent ID, key or owner; attempt below 1; lease not positive) returns an error and changes nothing, whether or not the intent has a record",
		run: func(t *testing.T, s idempay.KeyStore) {
			bad := map[string]func(*idempay.ReserveRequest){
				"empty namespace": func(r *idempay.ReserveRequest) { r.Namespace = "" },
				"empty intent ID": func(r *idempay.ReserveRequest) { r.ID = "" },
				"attempt 0":       func(r *idempay.ReserveRequest) { r.Attempt = 0 },
				"attempt -1":      func(r *idempay.ReserveRequest) { r.Attempt = -1 },
				"empty key":       func(r *idempay.ReserveRequest) { r.Key = "" },
				"empty owner":     func(r *idempay.ReserveRequest) { r.Owner = "" },
				"lease 0":         func(r *idempay.ReserveRequest) { r.Lease = 0 },
				"negative lease":  func(r *idempay.ReserveRequest) { r.Lease = -time.Second },
			}
			try := func(id string) {
				for what, spoil := range bad {
					r := request(id, "owner-a")
					spoil(&r)
					if _, err := s.Reserve(t.Context(), r); err == nil {
						t.Errorf("Reserve of %q with %s returned no error", id, what)
					}
				}
			}
			try("order-1")
			if _, err := s.Load(t.Context(), "ns", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load after invalid Reserves of an absent intent = %v; want ErrNotFound: nothing may be inserted", err)
			}
			if open, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 100); err != nil || len(open) != 0 {
				t.Errorf("ListOpen after invalid Reserves = %d records, %v; want none", len(open), err)
			}

			// The holder itself, with a spoilt request: no renewal.
			r := withLease(request("order-2", "owner-a"), 10*time.Second)
			want := reserve(t, s, r).Record
			try("order-2")
			checkStored(t, s, "invalid Reserves of an existing intent must not change it", want)
		},
	}}
}
