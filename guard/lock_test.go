package guard_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// lockWorld is a guard on a memstore behind a faultStore, both on one
// fake clock, with the shortest lease.
type lockWorld struct {
	clock  *fakeClock
	store  *faultStore
	g      *guard.Guard
	events chan guard.Event
}

func newLockWorld(t *testing.T) *lockWorld {
	t.Helper()
	w := &lockWorld{clock: newFakeClock(), events: make(chan guard.Event, 16)}
	w.store = &faultStore{KeyStore: memstore.New(memstore.WithClock(w.clock.Now))}
	w.g = newGuard(t, w.store, guard.WithClock(w.clock.Now), guard.WithLease(idempay.MinLease),
		guard.WithObserver(func(e guard.Event) { w.events <- e }))
	return w
}

func (w *lockWorld) event(t *testing.T) guard.Event {
	t.Helper()
	select {
	case e := <-w.events:
		return e
	default:
		t.Fatal("no event")
		return guard.Event{}
	}
}

// Rule: the unsettled lock survives one store error on its write: it is
// written again, so a retry after the lease runs out is refused (409)
// instead of running the handler a second time.
func TestUnsettledLockRetriedAfterStoreError(t *testing.T) {
	w := newLockWorld(t)
	w.store.set(func(s *faultStore) { s.failResolve = once(isLock) })
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	wrapped := w.g.Wrap(h)
	if r := serve(wrapped, post("x")); r.Code != http.StatusBadGateway {
		t.Fatalf("first: %d %s", r.Code, r.Body)
	}
	if e := w.event(t); e.Outcome != guard.Unsettled {
		t.Fatalf("first request's outcome %v, want Unsettled (the lock written on the second try)", e.Outcome)
	}
	w.clock.Add(time.Hour) // every lease has run out
	r := serve(wrapped, post("x"))
	if h.runs.Load() != 1 || r.Code != http.StatusConflict || problemCode(t, r) != guard.CodeKeyUnsettled {
		t.Fatalf("retry: %d %s after %d runs; want 409 %s and one run", r.Code, r.Body, h.runs.Load(), guard.CodeKeyUnsettled)
	}
}

// Rule: the unsettled lock is written durably: it is what keeps the
// handler from running again after a crash of the store's server.
func TestUnsettledLockIsDurable(t *testing.T) {
	w := newLockWorld(t)
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	serve(w.g.Wrap(h), post("x"))
	locks := 0
	for _, res := range w.store.log() {
		if isLock(res) {
			locks++
			if !res.Durable {
				t.Fatalf("lock written without Durable: %+v", res)
			}
		}
	}
	if locks != 1 {
		t.Fatalf("%d lock writes, want 1", locks)
	}
}

// Rule: the answer of an unsettled request goes out only once its lock
// is written: a client that saw the 502 and retries never finds the key
// free.
func TestUnsettledAnswerWaitsForTheLock(t *testing.T) {
	w := newLockWorld(t)
	spy := &headerSpy{ResponseWriter: httptest.NewRecorder(), sent: make(chan int, 1)}
	sentBeforeLock := make(chan bool, 1)
	w.store.set(func(s *faultStore) {
		s.onResolve = func(res idempay.Resolution) {
			if isLock(res) {
				select {
				case <-spy.sent:
					sentBeforeLock <- true
				default:
					sentBeforeLock <- false
				}
			}
		}
	})
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		guard.MarkUnsettled(r.Context())
		rw.WriteHeader(http.StatusBadGateway)
		rw.Write([]byte("outcome unknown"))
		rw.(http.Flusher).Flush()
	})
	w.g.Wrap(h).ServeHTTP(spy, post("x"))
	select {
	case sent := <-sentBeforeLock:
		if sent {
			t.Fatal("the 502 went out before the lock was written")
		}
	default:
		t.Fatal("no lock written")
	}
	rec := spy.ResponseWriter.(*httptest.ResponseRecorder)
	if rec.Code != http.StatusBadGateway || rec.Body.String() != "outcome unknown" {
		t.Fatalf("answer %d %q", rec.Code, rec.Body)
	}
}

// Rule: a 201 of a request marked unsettled is stored even when the
// store fails its first write: the close is written again, and a retry
// after the lease is the replay, not a second run.
func TestUnsettled201CloseRetriedAfterStoreError(t *testing.T) {
	w := newLockWorld(t)
	w.store.set(func(s *faultStore) {
		s.failResolve = once(func(res idempay.Resolution) bool { return res.State == idempay.StateSucceeded })
	})
	h := &scripted{unsettled: map[int]bool{1: true}}
	wrapped := w.g.Wrap(h)
	if r := serve(wrapped, post("x")); r.Code != http.StatusCreated {
		t.Fatalf("first: %d %s", r.Code, r.Body)
	}
	if e := w.event(t); e.Outcome != guard.Stored {
		t.Fatalf("outcome %v, want Stored", e.Outcome)
	}
	w.clock.Add(time.Hour)
	r := serve(wrapped, post("x"))
	if h.runs.Load() != 1 || r.Code != http.StatusCreated || r.Header().Get(guard.HeaderReplayed) != "true" || r.Body.String() != "run I" {
		t.Fatalf("retry: %d %q replayed=%q after %d runs; want the replay of run I", r.Code, r.Body, r.Header().Get(guard.HeaderReplayed), h.runs.Load())
	}
}

// Rule: while the store refuses every write, the unsettled request is
// not answered with its 5xx: it is answered 503 "retry with the same
// key" only once the guard has given up, and the record stays leased to
// it until then, so no retry runs the handler meanwhile.
func TestUnsettledLockStoreDown(t *testing.T) {
	w := newLockWorld(t)
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	wrapped := w.g.Wrap(h)
	var retry *httptest.ResponseRecorder
	fails := 0
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if !isLock(res) || fails == 3 {
				return false
			}
			if fails++; fails == 3 {
				// The guard has kept trying; a retry meanwhile finds the
				// key in use. Then the store takes the lock.
				retry = serve(wrapped, post("x"))
			}
			return true
		}
	})
	r := serve(wrapped, post("x"))
	if retry == nil || retry.Code != http.StatusConflict || problemCode(t, retry) != guard.CodeKeyInUse {
		t.Fatalf("retry while the lock is being written: %+v", retry)
	}
	if r.Code != http.StatusBadGateway {
		t.Fatalf("first: %d %s", r.Code, r.Body)
	}
	w.clock.Add(time.Hour)
	if r := serve(wrapped, post("x")); h.runs.Load() != 1 || r.Code != http.StatusConflict || problemCode(t, r) != guard.CodeKeyUnsettled {
		t.Fatalf("retry after the lock: %d %s after %d runs", r.Code, r.Body, h.runs.Load())
	}
}

// Rule: when the store refuses the lock and every renewal for a whole
// lease, the guard gives up: the handler's 502 is not sent (its retry
// could find the key free), the client gets 503 "retry with the same
// key", and the outcome says Unrecorded.
func TestUnsettledLockGivesUp(t *testing.T) {
	w := newLockWorld(t)
	storeDownFrom(w, isLock)
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	r := serve(w.g.Wrap(h), post("x"))
	if r.Code != http.StatusServiceUnavailable || problemCode(t, r) != guard.CodeStoreDown || r.Header().Get("Retry-After") == "" {
		t.Fatalf("answer %d %s; want 503 %s", r.Code, r.Body, guard.CodeStoreDown)
	}
	if e := w.event(t); e.Outcome != guard.Unrecorded || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("event %+v", e)
	}
}

// Rule: a store out of reach for every call gives up too, whatever the
// guard's clock says (a clock that does not move, a virtual one): the
// request ends, answered 503.
func TestUnsettledLockGivesUpOnAStoreOutOfReach(t *testing.T) {
	w := newLockWorld(t)
	var down atomic.Bool
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if isLock(res) {
				down.Store(true)
			}
			return down.Load()
		}
		s.onReserve = func(idempay.ReserveRequest, idempay.Reservation) error {
			if down.Load() {
				return errInjected
			}
			return nil
		}
	})
	h := &scripted{statuses: []int{http.StatusBadGateway}, unsettled: map[int]bool{1: true}}
	if r := serve(w.g.Wrap(h), post("x")); r.Code != http.StatusServiceUnavailable || problemCode(t, r) != guard.CodeStoreDown {
		t.Fatalf("answer %d %s; want 503 %s", r.Code, r.Body, guard.CodeStoreDown)
	}
}

// storeDownFrom makes w's store refuse, from the first close that first
// matches, that close and every Reserve after it (each one moving the clock
// half a lease on): a store gone for good while the guard retries.
func storeDownFrom(w *lockWorld, first func(idempay.Resolution) bool) {
	var down atomic.Bool
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if first(res) {
				down.Store(true)
				return true
			}
			return false
		}
		s.onReserve = func(idempay.ReserveRequest, idempay.Reservation) error {
			if down.Load() {
				w.clock.Add(idempay.MinLease / 2)
				return errInjected
			}
			return nil
		}
	})
}
