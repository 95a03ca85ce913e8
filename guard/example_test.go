package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// The guard in front of a route of net/http's mux. The second request
// with the key is answered from the store, byte for byte; the same key
// with another body is refused.
func ExampleGuard_Wrap() {
	g, err := guard.New(memstore.New(), guard.WithIdentity(func(r *http.Request) (string, error) {
		return r.Header.Get("X-Tenant"), nil // what your authentication established
	}))
	if err != nil {
		panic(err)
	}
	runs := 0
	checkout := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"charge_id":"ch_%d"}`, runs)
	})
	mux := http.NewServeMux()
	mux.Handle("POST /checkout", g.Wrap(checkout))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	send := func(body string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/checkout", strings.NewReader(body))
		req.Header.Set("X-Tenant", "acme")
		req.Header.Set("Idempotency-Key", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, describe(resp.Header, b))
	}
	send(`{"amount_jpy":1500}`)
	send(`{"amount_jpy":1500}`)
	send(`{"amount_jpy":150000}`)
	fmt.Println("handler runs:", runs)
	// Output:
	// 201 {"charge_id":"ch_1"}
	// 201 {"charge_id":"ch_1"} (replayed)
	// 422 problem idempotency_key_reused
	// handler runs: 1
}

// printKey is a Charger that shows which key it was given.
type printKey struct{}

func (printKey) Charge(_ context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	fmt.Println("charging", req.IntentID, "with key", idempay.AttemptKey(req.BaseKey, 1))
	return &idempay.Charge{ID: "ch_1"}, nil
}

// The handler passes the request's key on to the charge as its BaseKey:
// the frontend's key, the guard's record and the provider's key of the
// first attempt are one, so a retry that runs the handler again (after a
// 5xx or a crash) is answered by the provider from its record of the
// first charge, and a retry after an outage begins attempt 2 under
// idempay.AttemptKey(key, 2).
func ExampleKeyFrom() {
	var charger idempay.Charger = printKey{} // an *idempay.Client in production
	checkout := func(w http.ResponseWriter, r *http.Request) {
		key, _ := guard.KeyFrom(r.Context())
		_, err := charger.Charge(r.Context(), idempay.ChargeRequest{
			IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "tokn_test_1", BaseKey: key,
		})
		if err != nil {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
	g, _ := guard.New(memstore.New(), guard.WithIdentity(guard.SingleTenant))
	r := httptest.NewRequest(http.MethodPost, "/checkout", strings.NewReader(`{}`))
	r.Header.Set("Idempotency-Key", "8e03978e-40d5-43e8-bc93-6894a57f9324")
	g.Wrap(http.HandlerFunc(checkout)).ServeHTTP(httptest.NewRecorder(), r)
	// Output: charging order-1 with key 8e03978e-40d5-43e8-bc93-6894a57f9324
}

// A handler that cannot tell whether money moved, and could not charge
// under the request's key, marks the request unsettled: its key stays
// locked (409) until the application settles it.
func ExampleGuard_Settle() {
	g, _ := guard.New(memstore.New(), guard.WithIdentity(guard.SingleTenant))
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		guard.MarkUnsettled(r.Context()) // the provider timed out after the request was sent
		http.Error(w, "payment outcome unknown", http.StatusBadGateway)
	}))
	const key = "8e03978e-40d5-43e8-bc93-6894a57f9324"
	send := func() {
		r := httptest.NewRequest(http.MethodPost, "/checkout", strings.NewReader(`{"amount_jpy":1500}`))
		r.Header.Set("Idempotency-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, describe(w.Header(), w.Body.Bytes()))
	}
	send()
	send()
	for u, err := range g.Unsettled(context.Background()) {
		if err != nil {
			panic(err)
		}
		fmt.Println("unsettled:", u.Method, u.Path, u.Key)
		// Later: the charge was found at the provider.
		err = g.Settle(context.Background(), u.Identity, u.Key, guard.Response{
			Status: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"charge_id":"ch_1"}`),
		})
		fmt.Println("settled:", err)
	}
	send()
	err := g.Settle(context.Background(), "-", key, guard.Response{Status: http.StatusCreated})
	fmt.Println(errors.Is(err, guard.ErrNotUnsettled))
	// Output:
	// 502 payment outcome unknown
	// 409 problem idempotency_key_unsettled
	// unsettled: POST /checkout 8e03978e-40d5-43e8-bc93-6894a57f9324
	// settled: <nil>
	// 201 {"charge_id":"ch_1"} (replayed)
	// true
}

// describe shows a body, or a problem's code, and the replay mark.
func describe(h http.Header, body []byte) string {
	s := strings.TrimSpace(string(body))
	if h.Get("Content-Type") == "application/problem+json" {
		var p struct{ Code string }
		_ = json.Unmarshal(body, &p)
		s = "problem " + p.Code
	}
	if h.Get("Idempotency-Replayed") == "true" {
		s += " (replayed)"
	}
	return s
}
