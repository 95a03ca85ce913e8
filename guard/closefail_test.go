package guard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// isResponseClose reports whether res closes a record with a response to
// replay (kind response or not_stored), as opposed to a release or a lock.
func isResponseClose(res idempay.Resolution) bool {
	return res.State.Closed() && !strings.Contains(string(res.Result), `"kind":"released"`)
}

// finalAnswers are the answers the guard stands by: every retry is their
// replay, so none may reach the client before its close is written.
var finalAnswers = map[string]*scripted{
	"201":       {statuses: []int{http.StatusCreated}},
	"202":       {statuses: []int{http.StatusAccepted}},
	"402 final": {statuses: []int{http.StatusPaymentRequired}, final: map[int]bool{1: true}},
}

// Rule (CK-3): a final answer whose close fails on a store error is
// written again before the client gets it, so a retry after the lease is
// its replay: the handler runs once.
func TestFinalAnswerCloseRetriedAfterStoreError(t *testing.T) {
	for name, proto := range finalAnswers {
		t.Run(name, func(t *testing.T) {
			w := newLockWorld(t)
			w.store.set(func(s *faultStore) { s.failResolve = once(isResponseClose) })
			h := &scripted{statuses: proto.statuses, final: proto.final}
			wrapped := w.g.Wrap(h)
			first := serve(wrapped, post("x"))
			if first.Code != proto.statuses[0] {
				t.Fatalf("first: %d %s", first.Code, first.Body)
			}
			e := w.event(t)
			w.clock.Add(time.Hour) // every lease has run out
			r := serve(wrapped, post("x"))
			if h.runs.Load() != 1 || r.Code != first.Code || r.Header().Get(guard.HeaderReplayed) != "true" || r.Body.String() != first.Body.String() {
				t.Fatalf("retry after the lease: %d %q replayed=%q after %d runs; want the replay and one run",
					r.Code, r.Body, r.Header().Get(guard.HeaderReplayed), h.runs.Load())
			}
			if e.Outcome != guard.Stored {
				t.Fatalf("outcome %v, want Stored (the close written on its second try)", e.Outcome)
			}
		})
	}
}

// closedSpy is a ResponseWriter that, when the status goes out, notes
// whether the guard's namespace still had an open record in the store.
type closedSpy struct {
	http.ResponseWriter
	store   idempay.KeyStore
	ns      string
	checked atomic.Bool
	open    atomic.Int32
}

func (s *closedSpy) WriteHeader(code int) {
	if !s.checked.Swap(true) {
		recs, err := s.store.ListOpen(context.Background(), s.ns, idempay.Cursor{}, 10)
		if err != nil {
			panic(err)
		}
		s.open.Store(int32(len(recs)))
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *closedSpy) Write(b []byte) (int, error) {
	if !s.checked.Load() {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Rule (CK-3), on every store: the status of a final answer reaches the
// client only once its record is closed in the store, even when the first
// try of the close failed.
func TestFinalAnswerGoesOutOnlyOnceClosed(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		fs := &faultStore{KeyStore: store}
		fs.set(func(s *faultStore) { s.failResolve = once(isResponseClose) })
		g := newGuard(t, fs)
		h := &scripted{}
		spy := &closedSpy{ResponseWriter: httptest.NewRecorder(), store: store, ns: g.Namespace()}
		g.Wrap(h).ServeHTTP(spy, post("x"))
		if code := spy.ResponseWriter.(*httptest.ResponseRecorder).Code; code != http.StatusCreated {
			t.Fatalf("answer %d, want 201", code)
		}
		if n := spy.open.Load(); n != 0 || fs.resolveErr.Load() != 1 {
			t.Fatalf("the 201 went out with %d open records (%d close errors injected); want it closed first", n, fs.resolveErr.Load())
		}
		if r := serve(g.Wrap(h), post("x")); h.runs.Load() != 1 || r.Header().Get(guard.HeaderReplayed) != "true" {
			t.Fatalf("retry: %d after %d runs; want the replay", r.Code, h.runs.Load())
		}
	})
}

// Rule (CK-3): when the store refuses the close and every renewal for a
// whole lease, the final answer is not sent (its retry could find the
// key free and run the handler again): the client gets 503 "retry with
// the same key", and the outcome says Unrecorded.
func TestFinalAnswerStoreDownAnswers503(t *testing.T) {
	w := newLockWorld(t)
	storeDownFrom(w, isResponseClose)
	r := serve(w.g.Wrap(&scripted{}), post("x"))
	if r.Code != http.StatusServiceUnavailable || problemCode(t, r) != guard.CodeStoreDown || r.Header().Get("Retry-After") == "" {
		t.Fatalf("answer %d %s; want 503 %s", r.Code, r.Body, guard.CodeStoreDown)
	}
	if e := w.event(t); e.Outcome != guard.Unrecorded || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("event %+v", e)
	}
}

// Rule (CK-3): a handler that flushes a final answer streams it, but only
// once the key is locked: if its close then fails for good, a retry after
// the lease is refused (409 unsettled, for the application to settle), not
// run again.
func TestFlushedFinalAnswerKeepsTheKeyLocked(t *testing.T) {
	w := newLockWorld(t)
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if isResponseClose(res) {
				w.clock.Add(idempay.MinLease) // so that the guard gives up at once
				return true
			}
			return false
		}
	})
	runs := 0
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		runs++
		rw.WriteHeader(http.StatusOK)
		rw.Write([]byte("part"))
		if err := http.NewResponseController(rw).Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
		rw.Write([]byte(" rest"))
	})
	wrapped := w.g.Wrap(h)
	first := serve(wrapped, post("x"))
	if !first.Flushed || first.Code != http.StatusOK || first.Body.String() != "part rest" {
		t.Fatalf("first: flushed %v, %d %q", first.Flushed, first.Code, first.Body)
	}
	w.clock.Add(time.Hour)
	w.store.set(func(s *faultStore) { s.failResolve = nil })
	r := serve(wrapped, post("x"))
	if runs != 1 || r.Code != http.StatusConflict || problemCode(t, r) != guard.CodeKeyUnsettled {
		t.Fatalf("retry after the lease: %d %s after %d runs; want 409 %s and one run", r.Code, r.Body, runs, guard.CodeKeyUnsettled)
	}
}

// Rule: a flushed final answer whose close lands is stored and replayed
// as a held one is: the lock written before the first byte is replaced by
// the response.
func TestFlushedFinalAnswerIsReplayed(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		fs := &faultStore{KeyStore: store}
		g := newGuard(t, fs)
		runs := 0
		h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			runs++
			rw.WriteHeader(http.StatusCreated)
			rw.Write([]byte("part"))
			rw.(http.Flusher).Flush()
			rw.Write([]byte(" rest"))
		})
		first := serve(g.Wrap(h), post("x"))
		if !first.Flushed || first.Body.String() != "part rest" {
			t.Fatalf("first: flushed %v %q", first.Flushed, first.Body)
		}
		locked := false
		for _, res := range fs.log() {
			if isLock(res) {
				locked = true
				if !res.Durable {
					t.Fatalf("lock before the stream written without Durable: %+v", res)
				}
			}
		}
		if !locked {
			t.Fatal("the stream went out without the key locked first")
		}
		r := serve(g.Wrap(h), post("x"))
		if runs != 1 || r.Code != http.StatusCreated || r.Body.String() != "part rest" || r.Header().Get(guard.HeaderReplayed) != "true" {
			t.Fatalf("retry: %d %q after %d runs; want the replay", r.Code, r.Body, runs)
		}
	})
}

// Rule (CK-3): a 4xx marked final only after its status was written is
// held too: if its close cannot be written, the client gets 503 "retry
// with the same key", never the 402 the guard could not stand by.
func TestLateMarkFinalAnswerIsHeld(t *testing.T) {
	w := newLockWorld(t)
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if isResponseClose(res) {
				w.clock.Add(idempay.MinLease) // the guard gives up at once
				return true
			}
			return false
		}
	})
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusPaymentRequired)
		guard.MarkFinal(r.Context())
		rw.Write([]byte("declined"))
	})
	r := serve(w.g.Wrap(h), post("x"))
	if r.Code != http.StatusServiceUnavailable || problemCode(t, r) != guard.CodeStoreDown {
		t.Fatalf("answer %d %q; want 503 %s in place of the 402 not recorded", r.Code, r.Body, guard.CodeStoreDown)
	}
}

// Rule (CK-3): an answer that outgrows WithMaxResponse streams once the
// key is locked; if its close (the not_stored marker) then fails for
// good, the retry is refused, not run again.
func TestOversizedAnswerStreamsLocked(t *testing.T) {
	w := newLockWorld(t)
	g := newGuard(t, w.store, guard.WithClock(w.clock.Now), guard.WithLease(idempay.MinLease), guard.WithMaxResponse(8))
	w.store.set(func(s *faultStore) {
		s.failResolve = func(res idempay.Resolution) bool {
			if isResponseClose(res) {
				w.clock.Add(idempay.MinLease)
				return true
			}
			return false
		}
	})
	runs := 0
	var sentEarly bool
	rec := httptest.NewRecorder()
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		runs++
		rw.WriteHeader(http.StatusCreated)
		rw.Write([]byte("0123456789abcdef")) // over the limit of 8
		sentEarly = rec.Body.Len() > 0
	})
	g.Wrap(h).ServeHTTP(rec, post("x"))
	if !sentEarly || rec.Code != http.StatusCreated {
		t.Fatalf("first: %d, streamed before the handler ended: %v", rec.Code, sentEarly)
	}
	w.clock.Add(time.Hour)
	w.store.set(func(s *faultStore) { s.failResolve = nil })
	r := serve(g.Wrap(h), post("x"))
	if runs != 1 || r.Code != http.StatusConflict || problemCode(t, r) != guard.CodeKeyUnsettled {
		t.Fatalf("retry after the lease: %d %s after %d runs; want 409 %s", r.Code, r.Body, runs, guard.CodeKeyUnsettled)
	}
}
