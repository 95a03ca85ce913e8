package refserver

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// TestRetentionExpiry: within the window a resend is replayed; once the
// window has passed the server has forgotten the key and charges again,
// which the ledger reports as a duplicate (defect 10).
func TestRetentionExpiry(t *testing.T) {
	for _, retention := range []time.Duration{0, time.Hour} {
		window := retention
		if window == 0 {
			window = DefaultRetention
		}
		clock := NewManualClock(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC))
		s, ts := newTest(t, Config{Retention: retention, Now: clock.Now})
		c := ts.Client()
		first := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, first, 201)

		clock.Advance(window - time.Second)
		if r := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa")); !r.replayed() {
			t.Fatalf("retention %v: resend within the window not replayed (status %d)", window, r.status)
		}
		clock.Advance(time.Second)
		late := post(t, c, ts.URL, "k1", body("ord_1", 1500, "tok_visa"))
		mustStatus(t, late, 201)
		if late.replayed() {
			t.Fatalf("retention %v: key still remembered after the window", window)
		}
		mustCharges(t, s, 2)
		var dup *fakes.MoneyError
		if err := s.Ledger().Check(); !errors.As(err, &dup) || len(dup.Violations) != 1 ||
			dup.Violations[0].Intent != "ord_1" || len(dup.Violations[0].IDs) != 2 {
			t.Errorf("Check() = %v", err)
		}
		// The lookup still settles the order, from the ledger.
		lookup := get(t, c, http.MethodGet, ts.URL+DefaultPath+"?order_id=ord_1")
		mustStatus(t, lookup, 200)
		if lookup.charge(t).ChargeID != first.charge(t).ChargeID {
			t.Errorf("lookup returned %s, want the first charge", lookup.body)
		}
	}
}
