package guard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// Rule: a reservation answered only after its lease ran out starts no
// work: another request may hold the key by now. The request is answered
// 503 "retry with the same key", and the handler does not run.
func TestReserveAnsweredAfterTheLeaseRanOut(t *testing.T) {
	w := newLockWorld(t)
	var first atomic.Bool
	w.store.set(func(s *faultStore) {
		s.onReserve = func(r idempay.ReserveRequest, res idempay.Reservation) error {
			if res.Claimed && first.CompareAndSwap(false, true) {
				w.clock.Add(2 * idempay.MinLease) // the answer arrives late
			}
			return nil
		}
	})
	h := &counter{}
	r := serve(w.g.Wrap(h), post("x"))
	if h.runs.Load() != 0 {
		t.Fatalf("the handler ran %d times on a lease that had run out", h.runs.Load())
	}
	if r.Code != http.StatusServiceUnavailable || problemCode(t, r) != guard.CodeStoreDown || r.Header().Get("Retry-After") == "" {
		t.Fatalf("answer %d %s", r.Code, r.Body)
	}
	// The key is not burnt: the retry runs the handler.
	if r := serve(w.g.Wrap(h), post("x")); r.Code != http.StatusCreated || h.runs.Load() != 1 {
		t.Fatalf("retry: %d after %d runs", r.Code, h.runs.Load())
	}
}

// Rule: a request whose lease was lost while its handler ran (a pause
// longer than the lease, a handler that ignores its context) does not
// close the record under the request that took it over: the second
// request's response is the one stored and replayed.
func TestLostLeaseDoesNotCloseTheTakeover(t *testing.T) {
	w := newLockWorld(t)
	var firstOwner atomic.Value
	w.store.set(func(s *faultStore) {
		s.onReserve = func(r idempay.ReserveRequest, res idempay.Reservation) error {
			if o, ok := firstOwner.Load().(string); ok && o == r.Owner {
				return errInjected // the first request's renewals never arrive
			}
			firstOwner.CompareAndSwap(nil, r.Owner)
			return nil
		}
	})
	release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	started := make(chan int, 2)
	var runs atomic.Int32
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n := int(runs.Add(1))
		started <- n
		<-release[n-1] // ignores its context
		rw.WriteHeader(http.StatusCreated)
		rw.Write([]byte("run " + strings.Repeat("I", n)))
	})
	wrapped := w.g.Wrap(h)
	firstDone := make(chan *httptest.ResponseRecorder, 1)
	go func() { firstDone <- serve(wrapped, post("x")) }()
	<-started
	w.clock.Add(2 * idempay.MinLease) // the first lease runs out
	secondDone := make(chan *httptest.ResponseRecorder, 1)
	go func() { secondDone <- serve(wrapped, post("x")) }()
	if n := <-started; n != 2 {
		t.Fatalf("run %d", n)
	}
	close(release[0])
	<-firstDone
	rec, err := w.store.Load(t.Context(), w.g.Namespace(), recordOf(t, w))
	if err != nil {
		t.Fatal(err)
	}
	if rec.State.Closed() {
		t.Fatalf("the first request closed the record (%s) while the second ran it", rec.State)
	}
	close(release[1])
	if r := <-secondDone; r.Code != http.StatusCreated {
		t.Fatalf("second: %d", r.Code)
	}
	w.clock.Add(time.Hour)
	if r := serve(wrapped, post("x")); r.Body.String() != "run II" || r.Header().Get(guard.HeaderReplayed) != "true" {
		t.Fatalf("replay %q (replayed=%q), want the second run's", r.Body, r.Header().Get(guard.HeaderReplayed))
	}
}

// recordOf finds the ID of the one record in the guard's namespace.
func recordOf(t *testing.T, w *lockWorld) string {
	t.Helper()
	recs, err := w.store.ListOpen(t.Context(), w.g.Namespace(), idempay.Cursor{}, 10)
	if err != nil || len(recs) != 1 {
		t.Fatalf("open records %d, %v", len(recs), err)
	}
	return recs[0].ID
}
