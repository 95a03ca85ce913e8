package guard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkGuard compares a handler alone with the same handler behind the
// guard on memstore, for a first request (new key: Reserve and Close) and
// a replay (Reserve only). Names are benchstat-friendly:
//
//	go test -run '^$' -bench BenchmarkGuard -benchmem -count 10 ./guard | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkGuard(b *testing.B) {
	const body = `{"order_id":"o-1","amount_jpy":1500,"omise_token":"tokn_test_1"}`
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"order_id":"o-1","charge_id":"chrg_1","status":"successful","amount_jpy":1500}`))
	})
	request := func(key string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/checkout", strings.NewReader(body))
		r.Header.Set("Idempotency-Key", key)
		r.Header.Set(tenantHeader, "acme")
		return r
	}
	run := func(b *testing.B, h http.Handler, key func(i int) string, want int) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, request(key(i)))
			if w.Code != want {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	}
	b.Run("handler=bare", func(b *testing.B) {
		run(b, h, func(int) string { return testKey }, http.StatusCreated)
	})
	b.Run("guard=first", func(b *testing.B) {
		g := newGuard(b, newMem()).Wrap(h)
		run(b, g, func(i int) string { return fmt.Sprintf("bench-key-%016d", i) }, http.StatusCreated)
	})
	b.Run("guard=replay", func(b *testing.B) {
		g := newGuard(b, newMem()).Wrap(h)
		run(b, g, func(int) string { return testKey }, http.StatusCreated)
	})
}
