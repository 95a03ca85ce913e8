package storetest

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
)

func namespaceCases() []testCase {
	return []testCase{{
		name: "Namespace/same intent ID in two namespaces is two records",
		rule: "Records are keyed by (Namespace, IntentID): the same intent ID under two namespaces gets two records with their own keys, and Reserve, Load, Resolve and ListOpen never reach across namespaces",
		run: func(t *testing.T, s idempay.KeyStore) {
			ra, rb := request("order-1", "owner-a"), request("order-1", "owner-b")
			ra.Namespace, rb.Namespace = "stripe:acct_a", "stripe:acct_b"
			got := reserve(t, s, ra)
			checkReply(t, "Reserve in "+ra.Namespace, got, true, true)
			a := got.Record
			got = reserve(t, s, rb)
			checkReply(t, "Reserve of the same intent ID in "+rb.Namespace+", taken only in another namespace", got, true, true)
			b := got.Record
			checkStored(t, s, "record of namespace a", inserted(ra, a.CreatedAt))
			checkStored(t, s, "record of namespace b", inserted(rb, b.CreatedAt))

			// A's key must not resolve B's record, even though the
			// intent IDs are equal.
			cross := resolution(a, idempay.StateSucceeded)
			cross.Namespace = b.Namespace
			if err := s.Resolve(t.Context(), cross); !errors.Is(err, idempay.ErrKeyMismatch) {
				t.Errorf("Resolve of namespace b's record with namespace a's key = %v; want ErrKeyMismatch", err)
			}
			apply(t, s, "record of namespace a, resolved", a, resolution(a, idempay.StateSucceeded))
			checkStored(t, s, "record of namespace b after namespace a's was resolved", b)

			for _, ns := range []string{ra.Namespace, rb.Namespace} {
				open, err := s.ListOpen(t.Context(), ns, idempay.Cursor{}, 100)
				if err != nil {
					t.Fatalf("ListOpen(%q) = %v", ns, err)
				}
				for _, r := range open {
					if r.Namespace != ns {
						t.Errorf("ListOpen(%q) returned a record of namespace %q", ns, r.Namespace)
					}
				}
				want := 0
				if ns == rb.Namespace {
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
