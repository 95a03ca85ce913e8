package refserver

import (
	"net/http"
	"testing"
)

// TestTenantsDoNotShareKeys: the same key under two merchants is two
// keys: each charges, neither sees the other's response (defect 6).
func TestTenantsDoNotShareKeys(t *testing.T) {
	auth := map[string]string{"sk_a": "acct_a", "sk_b": "acct_b"}
	cases := []struct {
		name    string
		cfg     Config
		a, b    []string // headers of the two tenants
		tenants [2]string
	}{
		{"Merchant-Id header", Config{}, []string{MerchantHeader, "m1"}, []string{MerchantHeader, "m2"},
			[2]string{"m1", "m2"}},
		{"bearer secrets", Config{Auth: auth}, []string{"Authorization", "Bearer sk_a"},
			[]string{"Authorization", "Bearer sk_b"}, [2]string{"acct_a", "acct_b"}},
		{"sub-accounts of one secret", Config{Auth: auth},
			[]string{"Authorization", "Bearer sk_a", MerchantHeader, "shop1"},
			[]string{"Authorization", "Bearer sk_a", MerchantHeader, "shop2"},
			[2]string{"acct_a/shop1", "acct_a/shop2"}},
		{"bearer without configured auth", Config{}, []string{"Authorization", "Bearer x"},
			[]string{"Authorization", "Bearer y"}, [2]string{"x", "y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ts := newTest(t, tc.cfg)
			c := ts.Client()
			ra := post(t, c, ts.URL, "shared", body("ord_1", 1500, "tok_visa"), tc.a...)
			// Another body under the same key: no 422 across tenants.
			rb := post(t, c, ts.URL, "shared", body("ord_1", 2000, "tok_visa"), tc.b...)
			mustStatus(t, ra, 201)
			mustStatus(t, rb, 201)
			if ra.replayed() || rb.replayed() {
				t.Fatal("one tenant was answered with the other's response")
			}
			mustCharges(t, s, 2)
			for i, ch := range s.Ledger().Charges() {
				if ch.Merchant != tc.tenants[i] {
					t.Errorf("charge %d under merchant %q, want %q", i, ch.Merchant, tc.tenants[i])
				}
			}
			// Each tenant's replay is its own charge.
			again := post(t, c, ts.URL, "shared", body("ord_1", 1500, "tok_visa"), tc.a...)
			if !again.replayed() || again.charge(t).ChargeID != ra.charge(t).ChargeID {
				t.Errorf("tenant A's replay: %s", again.body)
			}
			// Same order under two merchants is not a duplicate.
			if err := s.Ledger().Check(); err != nil {
				t.Error(err)
			}
			// Lookups are scoped too.
			lookup := get(t, c, http.MethodGet, ts.URL+DefaultPath+"?order_id=ord_1", tc.b...)
			mustStatus(t, lookup, 200)
			if lookup.charge(t).AmountJPY != 2000 {
				t.Errorf("tenant B looked up %s", lookup.body)
			}
		})
	}
}
