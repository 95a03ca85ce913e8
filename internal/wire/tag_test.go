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
	rec := idempay.Record{Namespace: "stripe:shop-a", IntentID: "order-1"}
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
	if got := OwnerOf(Tags{Intent: "order-1"}, idempay.Record{IntentID: "order-1"}); got != Own {
		t.Errorf("a record without a namespace: %v, want Own", got)
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
