package idempay_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// chargeAllocBudget is how many allocations a charge on the memory store
// may make beyond a bare net/http POST of it: exactly what the client
// reaches now, so that any change adding one fails (92 before issue 20,
// 72 after its first round, 106 once every success wrote the ledger, 79
// after the ledger's second read, the per-write timers and the copies
// went). Issue 20's goal is 40: lower it as the charge path sheds more
// (see docs/performance.md for what is left).
const chargeAllocBudget = 79

// cannedTransport answers every request with a created charge, from memory:
// what is counted is the client's own work, not a server's or a socket's.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(`{"order_id":"o","charge_id":"ch_1","status":"succeeded","amount_jpy":1500}`)),
		Request: req}, nil
}

// TestChargeAllocationsNearRaw: a charge through idempay (memory store,
// fresh key, one attempt) allocates at most chargeAllocBudget more than the
// same POST through net/http alone, as a user without idempay would send it.
func TestChargeAllocationsNearRaw(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	hc := &http.Client{Transport: cannedTransport{}}
	n := 0
	raw := testing.AllocsPerRun(200, func() {
		n++
		body := fmt.Sprintf(`{"order_id":"bench-%d","amount_jpy":1500,"omise_token":"tokn_bench"}`, n)
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/payments/charge", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("key-%d", n))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	})
	c, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: memstore.New(), HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(200, func() {
		n++
		if _, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("bench-%d", n),
			Amount: 1500, Currency: "JPY", Source: "tokn_bench"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations per charge: net/http %.0f, idempay %.0f (+%.0f)", raw, got, got-raw)
	if got-raw > chargeAllocBudget {
		t.Errorf("a charge allocates %.0f beyond net/http's %.0f; the budget is %d", got-raw, raw, chargeAllocBudget)
	}
}
