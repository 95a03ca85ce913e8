package wire

import (
	"testing"

	"github.com/idempay/idempay"
)

// TestOwnerOf states who a charge belongs to, by its tags: only the
// record's namespace and intent make it Own; the intent alone is Legacy,
// which LegacyIsOwn accepts by the record's own reference or the
// operator's declared claimant only.
func TestOwnerOf(t *testing.T) {
	rec := idempay.Record{Namespace: "stripe:shop-a", ID: "order-1"}
	for _, tc := range []struct {
		name string
		tags Tags
		want Owner
	}{
		{"namespace and intent", Tags{Intent: "order-1", Namespace: "stripe:shop-a", HasNamespace: true}, Own},
		{"another account, same intent ID", Tags{Intent: "order-1", Namespace: "stripe:shop-b", HasNamespace: true}, Foreign},
		{"empty namespace tag", Tags{Intent: "order-1", HasNamespace: true}, Foreign},
		{"another intent", Tags{Intent: "order-2", Namespace: "stripe:shop-a", HasNamespace: true}, Foreign},
		{"untagged", Tags{}, Foreign},
		{"intent alone", Tags{Intent: "order-1"}, Legacy},
	} {
		if got := OwnerOf(tc.tags, rec); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := OwnerOf(Tags{Intent: "order-1"}, idempay.Record{ID: "order-1"}); got != Own {
		t.Errorf("a record without a namespace: %v, want Own", got)
	}
	// Attempts: a charge is the record's current attempt's only when it
	// carries that attempt's key; one without a key predates attempts and
	// can only be the first attempt's.
	own := Tags{Intent: "order-1", Namespace: "stripe:shop-a", HasNamespace: true}
	withKey := func(key string) Tags { t := own; t.Key, t.HasKey = key, true; return t }
	first := idempay.Record{Namespace: "stripe:shop-a", ID: "order-1", Attempt: 1, Key: "k1"}
	second := idempay.Record{Namespace: "stripe:shop-a", ID: "order-1", Attempt: 2, Key: "k2"}
	for _, tc := range []struct {
		name string
		tags Tags
		rec  idempay.Record
		want Owner
	}{
		{"the attempt's key", withKey("k2"), second, Own},
		{"an earlier attempt's key", withKey("k1"), second, Foreign},
		{"no key, first attempt", own, first, Own},
		{"no key, second attempt", own, second, Foreign},
		{"intent alone, second attempt", Tags{Intent: "order-1"}, second, Foreign},
		{"a key, record without one", withKey("k9"), rec, Own},
	} {
		if got := OwnerOf(tc.tags, tc.rec); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		byRef    bool
		claimant string
		want     bool
	}{{true, "", true}, {false, "", false}, {false, "stripe:shop-b", false}, {false, "stripe:shop-a", true}} {
		if got := LegacyIsOwn(rec, tc.byRef, tc.claimant); got != tc.want {
			t.Errorf("LegacyIsOwn(byReference %v, claimant %q) = %v", tc.byRef, tc.claimant, got)
		}
	}
}
