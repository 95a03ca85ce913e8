package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// provider is a tiny payment API in this process, speaking the own-API
// contract idempay.OwnAPI defaults to (POST /payments/charge with an
// Idempotency-Key; 201, replays marked Idempotency-Replayed, 409 while a
// key runs, 422 for a key reused with another body). Its faults are the
// network's between the BFF and the provider: a request lost before it
// is processed, an answer lost after the charge, a 503.
type provider struct {
	faults *dice

	mu      sync.Mutex
	byKey   map[string]*providerEntry
	charges map[string][]string // order ID -> charge IDs: the ledger
	keys    map[string][]string // order ID -> the keys of its charges
	calls   map[string]int      // order ID -> requests that arrived
}

type providerEntry struct {
	sum    [32]byte
	done   bool
	status int
	body   []byte
}

func newProvider(faults *dice) *provider {
	return &provider{faults: faults, byKey: map[string]*providerEntry{},
		charges: map[string][]string{}, keys: map[string][]string{}, calls: map[string]int{}}
}

type chargeBody struct {
	OrderID   string `json:"order_id"`
	AmountJPY int64  `json:"amount_jpy"`
	Token     string `json:"omise_token"`
}

// ServeHTTP charges, replays or refuses one request, with faults.
func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var req chargeBody
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || r.URL.Path != "/payments/charge" || key == "" || json.Unmarshal(body, &req) != nil {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	p.count(req.OrderID)
	switch p.faults.roll("bff->provider: lost before processing", "provider: 503") {
	case 1:
		dropConnection(w)
		return
	case 2:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"type":"api_error","message":"unavailable"}}`, http.StatusServiceUnavailable)
		return
	}
	status, out, replayed := p.charge(key, req, body)
	if p.faults.roll("provider->bff: answer lost after the charge") == 1 {
		dropConnection(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if replayed {
		w.Header().Set("Idempotency-Replayed", "true")
	}
	w.WriteHeader(status)
	w.Write(out)
}

func (p *provider) count(order string) {
	p.mu.Lock()
	p.calls[order]++
	p.mu.Unlock()
}

// charge runs the key's first request, or answers from its record.
func (p *provider) charge(key string, req chargeBody, body []byte) (int, []byte, bool) {
	sum := sha256.Sum256(bytes.TrimSpace(body))
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.byKey[key]; ok {
		switch {
		case e.sum != sum:
			return http.StatusUnprocessableEntity, []byte(`{"error":{"type":"idempotency_error","message":"key reused"}}`), false
		case !e.done:
			return http.StatusConflict, []byte(`{"error":{"type":"idempotency_error","code":"in_flight"}}`), false
		}
		return e.status, e.body, true
	}
	id := fmt.Sprintf("chrg_%s_%d", req.OrderID, len(p.charges[req.OrderID])+1)
	p.charges[req.OrderID] = append(p.charges[req.OrderID], id)
	p.keys[req.OrderID] = append(p.keys[req.OrderID], key)
	out, _ := json.Marshal(map[string]any{"order_id": req.OrderID, "charge_id": id, "status": "successful", "amount_jpy": req.AmountJPY})
	p.byKey[key] = &providerEntry{sum: sum, done: true, status: http.StatusCreated, body: out}
	return http.StatusCreated, out, false
}

// ledger returns the charges and the requests that arrived for an order.
func (p *provider) ledger(order string) (charges []string, calls int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.charges[order]...), p.calls[order]
}

// dropConnection closes the connection without an answer, as a network
// cut does: the client sees an EOF after its request was written.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// keysOf returns the keys an order was charged under.
func (p *provider) keysOf(order string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.keys[order]...)
}
