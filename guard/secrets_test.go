package guard_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// recordingStore keeps every Result written, and fails Resolve on demand.
type recordingStore struct {
	idempay.KeyStore
	mu          sync.Mutex
	results     [][]byte
	failResolve bool
}

func (s *recordingStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, bytes.Clone(res.Result))
	if s.failResolve {
		return errors.New("store unreachable")
	}
	return s.KeyStore.Resolve(ctx, res)
}

// Rule: a stored response never holds a secret header, and the guard's
// logs name neither the caller, nor the key, nor a header or body.
func TestSecretsNeverStoredOrLogged(t *testing.T) {
	const (
		cookie = "session=cookie-secret-1"
		bearer = "Bearer bearer-secret-2"
		tenant = "tenant-private-3"
		body   = `{"card":"body-private-4"}`
	)
	store := &recordingStore{KeyStore: newMem()}
	var logs bytes.Buffer
	g := newGuard(t, store, guard.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", cookie)
		w.Header().Set("Authorization", bearer)
		w.Header().Set("Www-Authenticate", bearer)
		w.WriteHeader(http.StatusCreated)
	}))
	serve(h, newRequest(http.MethodPost, "/checkout", tenant, testKey, body))
	store.failResolve = true
	serve(h, newRequest(http.MethodPost, "/checkout", tenant, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", body))
	if !strings.Contains(logs.String(), "not recorded") {
		t.Fatalf("the failed close was not logged: %q", logs.String())
	}
	stored := bytes.Join(store.results, nil)
	for _, secret := range []string{"cookie-secret-1", "bearer-secret-2", "body-private-4"} {
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("the store holds %q: %s", secret, stored)
		}
	}
	for _, private := range []string{"cookie-secret-1", "bearer-secret-2", tenant, testKey, "9b1deb4d", "body-private-4"} {
		if strings.Contains(logs.String(), private) {
			t.Errorf("the log holds %q: %s", private, logs.String())
		}
	}
}

// flakyRenewals fails every Reserve after the first: the store becomes
// unreachable while the handler runs.
type flakyRenewals struct {
	idempay.KeyStore
	mu    sync.Mutex
	calls int
}

func (s *flakyRenewals) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n > 1 {
		return idempay.Reservation{}, errors.New("store unreachable")
	}
	return s.KeyStore.Reserve(ctx, r)
}

// Rule: a handler whose lease cannot be renewed is told to stop: its
// context ends with idempay.ErrLeaseLost as the cause, because another
// request may take the key over.
func TestLostLeaseEndsTheHandlersContext(t *testing.T) {
	var cause error
	h := newGuard(t, &flakyRenewals{KeyStore: newMem()}, guard.WithLease(idempay.MinLease)).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cause = context.Cause(r.Context())
		case <-time.After(5 * time.Second):
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	serve(h, post("x"))
	if !errors.Is(cause, idempay.ErrLeaseLost) {
		t.Fatalf("handler's context ended with %v, want ErrLeaseLost", cause)
	}
}
