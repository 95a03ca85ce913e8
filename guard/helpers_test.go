package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// testKey is a valid key: a UUID, as the draft suggests.
const testKey = "8e03978e-40d5-43e8-bc93-6894a57f9324"

// tenantHeader names the caller in the tests; a real service reads its
// authentication's result instead.
const tenantHeader = "X-Test-Tenant"

func tenantOf(r *http.Request) (string, error) {
	if t := r.Header.Get(tenantHeader); t != "" {
		return t, nil
	}
	return "", errors.New("no tenant")
}

// newGuard builds a guard identifying callers by tenantHeader.
func newGuard(t testing.TB, store idempay.KeyStore, opts ...guard.Option) *guard.Guard {
	t.Helper()
	g, err := guard.New(store, append([]guard.Option{guard.WithIdentity(tenantOf)}, opts...)...)
	if err != nil {
		t.Fatalf("guard.New: %v", err)
	}
	return g
}

// post builds a guarded request of tenant "acme" with testKey.
func post(body string) *http.Request {
	return newRequest(http.MethodPost, "/checkout", "acme", testKey, body)
}

func newRequest(method, target, tenant, key, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if tenant != "" {
		r.Header.Set(tenantHeader, tenant)
	}
	if key != "" {
		r.Header.Set(guard.HeaderKey, key)
	}
	return r
}

// serve runs one request through h and returns the recorded answer.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// servePanicking runs one request through h, which is expected to panic,
// and returns the recorded answer and the panic value.
func servePanicking(h http.Handler, r *http.Request) (w *httptest.ResponseRecorder, v any) {
	w = httptest.NewRecorder()
	defer func() { v = recover() }()
	h.ServeHTTP(w, r)
	return w, nil
}

// counter is a handler that counts its runs and answers 201 with a body
// naming the run.
type counter struct{ runs atomic.Int32 }

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.runs.Add(1)
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, `{"run":`+strconv.Itoa(int(n))+`,"echo":"`+string(body)+`"}`)
}

// countingStore counts the round trips to the store it wraps, by method.
type countingStore struct {
	idempay.KeyStore
	reserve, resolve, load, list atomic.Int32
	failReserve                  atomic.Bool
}

func (s *countingStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	s.reserve.Add(1)
	if s.failReserve.Load() {
		return idempay.Reservation{}, errors.New("store unreachable")
	}
	return s.KeyStore.Reserve(ctx, r)
}

func (s *countingStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	s.resolve.Add(1)
	return s.KeyStore.Resolve(ctx, res)
}

func (s *countingStore) Load(ctx context.Context, ns, id string) (idempay.Record, error) {
	s.load.Add(1)
	return s.KeyStore.Load(ctx, ns, id)
}

func (s *countingStore) ListOpen(ctx context.Context, ns string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	s.list.Add(1)
	return s.KeyStore.ListOpen(ctx, ns, after, limit)
}

// trips is the number of round trips so far, and resets the counts.
func (s *countingStore) trips() int {
	n := s.reserve.Swap(0) + s.resolve.Swap(0) + s.load.Swap(0) + s.list.Swap(0)
	return int(n)
}

// problemCode reads the "code" member of a problem+json answer, checking
// its content type.
func problemCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("status %d with Content-Type %q, want application/problem+json; body %s", w.Code, ct, w.Body)
	}
	var p struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
		Code   string `json:"code"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body %q: %v", w.Body, err)
	}
	if p.Status != w.Code || p.Title == "" || p.Type == "" {
		t.Fatalf("problem %+v does not match status %d or lacks a type or title", p, w.Code)
	}
	return p.Code
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newMem() *memstore.Store { return memstore.New() }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
