package storetest

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
)

func namespaceCases() []testCase {
	return []testCase{{
		name: "Namespace/same intent ID in two namespaces is two records",
		rule: "Records are keyed by (Namespace, IntentID): the same intent ID under two namespaces gets two records with their own keys, and Load, Resolve and ListOpen never reach across namespaces",
		run: func(t *testing.T, s idempay.KeyStore) {
			a := newRecord("stripe:acct_a", "order-1", "key-a", "owner", t0)
			b := newRecord("stripe:acct_b", "order-1", "key-b", "owner", t0.Add(us))
			if got := reserve(t, s, a); !got.Created {
				t.Errorf("Reserve in %q: Created = false; want true", a.Namespace)
			}
			if got := reserve(t, s, b); !got.Created || got.Record.Key != "key-b" {
				t.Errorf("Reserve in %q: Created=%v key %q; want Created and key %q: the intent ID is taken only in another namespace",
					b.Namespace, got.Created, got.Record.Key, "key-b")
			}
			checkStored(t, s, "record of namespace a", a)
			checkStored(t, s, "record of namespace b", b)

			// A's key must not resolve B's record, even though the
			// intent IDs are equal.
			cross := resolution(a, idempay.StateSucceeded, t0.Add(2*us))
			cross.Namespace = b.Namespace
			err := s.Resolve(t.Context(), cross)
			if !errors.Is(err, idempay.ErrKeyMismatch) {
				t.Errorf("Resolve of namespace b's record with namespace a's key = %v; want ErrKeyMismatch", err)
			}
			resolve(t, s, resolution(a, idempay.StateSucceeded, t0.Add(3*us)))
			checkStored(t, s, "record of namespace b after namespace a's was resolved", b)

			for _, ns := range []string{a.Namespace, b.Namespace} {
				open, err := s.ListOpen(t.Context(), ns, 0)
				if err != nil {
					t.Fatalf("ListOpen(%q) = %v", ns, err)
				}
				for _, r := range open {
					if r.Namespace != ns {
						t.Errorf("ListOpen(%q) returned a record of namespace %q", ns, r.Namespace)
					}
				}
				want := 0
				if ns == b.Namespace {
					want = 1
				}
				if len(open) != want {
					t.Errorf("ListOpen(%q) returned %d records; want %d", ns, len(open), want)
				}
			}
			if _, err := s.Load(t.Context(), "stripe:acct_c", "order-1"); !errors.Is(err, idempay.ErrNotFound) {
				t.Errorf("Load of the intent in a third namespace = %v; want ErrNotFound", err)
			}
		},
	}}
}
