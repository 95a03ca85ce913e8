package idempay

import (
	"bytes"
	"strings"
	"testing"
)

// fingerprintCases are requests whose fingerprints must not change: plain
// ones (the fast path) and ones whose strings encoding/json escapes.
func fingerprintCases() []ChargeRequest {
	plain := ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "jpy", Source: "tokn_1"}
	full := ChargeRequest{IntentID: "order-2", Amount: -3, Currency: "USD", Source: "pm_card_visa",
		Customer: "cus_1", Description: "two mugs", ReturnURL: "https://shop.example/back?x=1",
		Metadata: map[string]string{"b": "2", "a": "1", "": "empty key"},
		Extra:    map[string]string{"capture_method": "manual"}}
	var cases []ChargeRequest
	cases = append(cases, plain, full, ChargeRequest{}, ChargeRequest{Metadata: map[string]string{}})
	for _, odd := range []string{`"`, `\`, "<", ">", "&", "\n", "\t", "\b", "\f", "\x00", "\x1f",
		"\x7f", "é", "\u2028", "\u2029", "\xff", "日本"} {
		for field := range 7 {
			r := full
			r.Metadata = map[string]string{"k": "v"}
			switch field {
			case 0:
				r.IntentID += odd
			case 1:
				r.Currency += odd
			case 2:
				r.Customer = odd
			case 3:
				r.Description = "a" + odd + "b"
			case 4:
				r.Source = Secret(odd)
			case 5:
				r.Metadata = map[string]string{odd: "v"}
			case 6:
				r.Extra = map[string]string{"k": odd}
			}
			cases = append(cases, r)
		}
	}
	return cases
}

// TestFingerprintBytesAsEncodingJSON: the fingerprint written by hand is,
// byte for byte, the document encoding/json writes, so that records stored
// before keep matching their requests; a string it would escape falls back.
func TestFingerprintBytesAsEncodingJSON(t *testing.T) {
	for _, ns := range []string{"own:default", "stripe:acct<1>"} {
		for _, r := range fingerprintCases() {
			want := canonicalJSON(ns, r)
			got, ok := appendCanonical(nil, ns, r)
			if ok && !bytes.Equal(got, want) {
				t.Errorf("appendCanonical(%q, %+v)\n got %s\nwant %s", ns, r, got, want)
			}
			if !ok && !needsEscapeSomewhere(ns, r) {
				t.Errorf("appendCanonical(%q, %+v) fell back with nothing to escape", ns, r)
			}
		}
	}
}

func needsEscapeSomewhere(ns string, r ChargeRequest) bool {
	all := []string{ns, r.IntentID, strings.ToUpper(r.Currency), r.Customer, r.Description, r.ReturnURL, r.Source.Reveal()}
	for k, v := range r.Metadata {
		all = append(all, k, v)
	}
	for k, v := range r.Extra {
		all = append(all, k, v)
	}
	for _, s := range all {
		if needsJSONEscape(s) {
			return true
		}
	}
	return false
}

// TestFingerprintKnownValue pins one fingerprint as stored records carry it.
func TestFingerprintKnownValue(t *testing.T) {
	r := ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "jpy", Source: "tokn_1",
		Metadata: map[string]string{"b": "2", "a": "1"}}
	const want = "3b9bfcca38dca132dce7a9b7abb0c99c1fe4fec862706097c4e4d73902899d97"
	if got := fingerprint("own:default", r); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

// FuzzFingerprint: for any strings, the hand-written document is
// encoding/json's whenever it does not fall back.
func FuzzFingerprint(f *testing.F) {
	f.Add("own:default", "order-1", "jpy", "tokn", "k", "v", int64(1500))
	f.Add("ns", "a<b", "usd", "\u2028", "", "\xff", int64(-1))
	f.Fuzz(func(t *testing.T, ns, intent, cur, src, k, v string, amount int64) {
		r := ChargeRequest{IntentID: intent, Currency: cur, Source: Secret(src), Amount: amount,
			Description: k + v, Metadata: map[string]string{k: v, v + "x": k}}
		got, ok := appendCanonical(nil, ns, r)
		if want := canonicalJSON(ns, r); ok && !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
