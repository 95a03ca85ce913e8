package storetest

import (
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func reserveCases() []testCase {
	return []testCase{{
		name: "Reserve/absent intent is created and claimed as given",
		rule: "Reserve on an intent with no record stores the record as given and returns it with Created and Claimed true",
		run: func(t *testing.T, s idempay.KeyStore) {
			want := newRecord("ns", "order-1", "key-1", "owner-a", t0)
			got := reserve(t, s, want)
			if !got.Created || !got.Claimed {
				t.Errorf("first Reserve: Created=%v Claimed=%v; want both true", got.Created, got.Claimed)
			}
			checkRecord(t, "first Reserve must return the record as given", got.Record, want)
			checkStored(t, s, "first Reserve must store the record as given", want)
		},
	}, {
		name: "Reserve/existing intent keeps the first record",
		rule: "Reserve on an intent that has a record returns the stored record unchanged (its key, fingerprint and CreatedAt, not the caller's) with Created false",
		run: func(t *testing.T, s idempay.KeyStore) {
			first := newRecord("ns", "order-1", "key-1", "owner-a", t0)
			reserve(t, s, first)

			// Another instance, still inside owner-a's lease, with
			// another key and fingerprint: it must learn the first key
			// and must not be allowed to send.
			second := newRecord("ns", "order-1", "key-2", "owner-b", t0.Add(time.Second))
			got := reserve(t, s, second)
			if got.Created {
				t.Error("second Reserve: Created = true; want false: the intent already had a record")
			}
			if got.Claimed {
				t.Error("second Reserve: Claimed = true; want false: owner-a holds the lease until " + fmtTime(first.LeaseUntil))
			}
			checkRecord(t, "second Reserve must return the first record unchanged", got.Record, first)
			checkStored(t, s, "second Reserve must leave the first record unchanged", first)
		},
	}, {
		name: "Reserve/separator characters do not merge intents",
		rule: "Records are identified by the pair (Namespace, IntentID): namespaces and intent IDs containing ':', '/' or '|' must not collide as they would if the store joined them into one string",
		run: func(t *testing.T, s idempay.KeyStore) {
			pairs := [][2]string{
				{"stripe:acct", "x"}, {"stripe", "acct:x"},
				{"omise/acct", "y"}, {"omise", "acct/y"},
				{"p|q", "z"}, {"p", "q|z"},
				{"n", "id"}, {"ni", "d"},
			}
			for i, p := range pairs {
				r := newRecord(p[0], p[1], "key-"+string(rune('a'+i)), "owner", t0)
				if got := reserve(t, s, r); !got.Created {
					t.Errorf("Reserve(%q, %q): Created = false; want true: no record exists for this pair (key seen %q)", p[0], p[1], got.Record.Key)
				}
			}
			for i, p := range pairs {
				r := load(t, s, p[0], p[1])
				if want := "key-" + string(rune('a'+i)); r.Key != want {
					t.Errorf("Load(%q, %q).Key = %q; want %q", p[0], p[1], r.Key, want)
				}
			}
		},
	}}
}
