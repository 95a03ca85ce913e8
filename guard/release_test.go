package guard_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// scripted answers each run with the next status of its script (201 after
// the end), panicking for status 0 and marking the request as the marks
// say.
type scripted struct {
	statuses  []int
	final     map[int]bool // run number -> MarkFinal
	unsettled map[int]bool // run number -> MarkUnsettled
	runs      atomic.Int32
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(s.runs.Add(1))
	status := http.StatusCreated
	if n <= len(s.statuses) {
		status = s.statuses[n-1]
	}
	if s.final[n] {
		guard.MarkFinal(r.Context())
	}
	if s.unsettled[n] {
		guard.MarkUnsettled(r.Context())
	}
	if status == 0 {
		panic("handler failed")
	}
	w.WriteHeader(status)
	w.Write([]byte("run " + strings.Repeat("I", n)))
}

// Rule: a 5xx, a panic, and a 3xx or 4xx not marked final release the
// key: the retry runs the handler again, and its 2xx is stored.
func TestFailuresReleaseTheKey(t *testing.T) {
	cases := map[string]int{"500": 500, "503": 503, "panic": 0, "409 not final": 409, "303 not final": 303}
	for name, status := range cases {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
				var events []guard.Event
				h := &scripted{statuses: []int{status}}
				g := newGuard(t, store, guard.WithObserver(func(e guard.Event) { events = append(events, e) }))
				wrapped := g.Wrap(h)
				if status == 0 {
					if _, v := servePanicking(wrapped, post("x")); v == nil {
						t.Fatal("the panic did not go on to net/http")
					}
				} else if w := serve(wrapped, post("x")); w.Code != status {
					t.Fatalf("first: %d", w.Code)
				}
				w := serve(wrapped, post("x"))
				if w.Code != http.StatusCreated || h.runs.Load() != 2 || w.Header().Get(guard.HeaderReplayed) != "" {
					t.Fatalf("retry: %d replayed=%q after %d runs; want a fresh 201", w.Code, w.Header().Get(guard.HeaderReplayed), h.runs.Load())
				}
				if w := serve(wrapped, post("x")); w.Body.String() != "run II" || h.runs.Load() != 2 {
					t.Fatalf("replay %q after %d runs", w.Body, h.runs.Load())
				}
				if events[0].Outcome != guard.Released || events[1].Outcome != guard.Stored || events[2].Outcome != guard.Replayed {
					t.Fatalf("events %v", events)
				}
			})
		})
	}
}

// Rule: a 4xx marked final is stored and replayed like a 2xx: a decline
// stays a decline.
func TestFinal4xxIsStored(t *testing.T) {
	h := &scripted{statuses: []int{http.StatusPaymentRequired}, final: map[int]bool{1: true}}
	wrapped := newGuard(t, newMem()).Wrap(h)
	serve(wrapped, post("x"))
	w := serve(wrapped, post("x"))
	if w.Code != http.StatusPaymentRequired || w.Header().Get(guard.HeaderReplayed) != "true" || h.runs.Load() != 1 {
		t.Fatalf("retry of a final 402: %d replayed=%q runs %d", w.Code, w.Header().Get(guard.HeaderReplayed), h.runs.Load())
	}
}

// Rule: MarkFinal does not store a 5xx.
func TestFinal5xxIsNotStored(t *testing.T) {
	h := &scripted{statuses: []int{500}, final: map[int]bool{1: true}}
	wrapped := newGuard(t, newMem()).Wrap(h)
	serve(wrapped, post("x"))
	if w := serve(wrapped, post("x")); w.Code != http.StatusCreated || h.runs.Load() != 2 {
		t.Fatalf("retry of a 500 marked final: %d, runs %d", w.Code, h.runs.Load())
	}
}

// Rule: when money may have moved (MarkUnsettled) and the answer is not
// stored (5xx or panic), the key stays locked: every retry gets 409 with
// Retry-After and the handler does not run, until Settle records the
// answer; then retries get it, replayed.
func TestUnsettledKeepsTheKeyLocked(t *testing.T) {
	for name, status := range map[string]int{"502": 502, "panic": 0} {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
				h := &scripted{statuses: []int{status}, unsettled: map[int]bool{1: true}}
				g := newGuard(t, store)
				wrapped := g.Wrap(h)
				servePanicking(wrapped, post("x"))
				for range 2 {
					w := serve(wrapped, post("x"))
					if w.Code != http.StatusConflict || problemCode(t, w) != guard.CodeKeyUnsettled || w.Header().Get("Retry-After") == "" {
						t.Fatalf("retry of an unsettled request: %d %s", w.Code, w.Body)
					}
				}
				if w := serve(wrapped, post("other body")); w.Code != http.StatusUnprocessableEntity {
					t.Fatalf("another body under the locked key: %d", w.Code)
				}
				var listed []guard.UnsettledRequest
				for u, err := range g.Unsettled(t.Context()) {
					if err != nil {
						t.Fatal(err)
					}
					listed = append(listed, u)
				}
				if len(listed) != 1 || listed[0].Key != testKey || listed[0].Identity != "acme" || listed[0].Path != "/checkout" {
					t.Fatalf("Unsettled lists %+v", listed)
				}
				settled := guard.Response{Status: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}, "Set-Cookie": {"s=1"}},
					Body: []byte(`{"charge":"ch_1"}`)}
				if err := g.Settle(t.Context(), "acme", testKey, settled); err != nil {
					t.Fatalf("Settle: %v", err)
				}
				w := serve(wrapped, post("x"))
				if w.Code != http.StatusCreated || w.Body.String() != `{"charge":"ch_1"}` || w.Header().Get(guard.HeaderReplayed) != "true" ||
					w.Header().Get("Set-Cookie") != "" || h.runs.Load() != 1 {
					t.Fatalf("after Settle: %d %q %v, runs %d", w.Code, w.Body, w.Header(), h.runs.Load())
				}
				if err := g.Settle(t.Context(), "acme", testKey, settled); err != guard.ErrNotUnsettled {
					t.Fatalf("second Settle: %v, want ErrNotUnsettled", err)
				}
			})
		})
	}
}

// Rule: Reopen unlocks an unsettled request: its next retry runs the
// handler again.
func TestReopenLetsTheHandlerRunAgain(t *testing.T) {
	h := &scripted{statuses: []int{502}, unsettled: map[int]bool{1: true}}
	g := newGuard(t, newMem())
	wrapped := g.Wrap(h)
	serve(wrapped, post("x"))
	if err := g.Reopen(t.Context(), "acme", testKey); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if w := serve(wrapped, post("x")); w.Code != http.StatusCreated || h.runs.Load() != 2 {
		t.Fatalf("after Reopen: %d, runs %d", w.Code, h.runs.Load())
	}
	if err := g.Reopen(t.Context(), "acme", testKey); err != guard.ErrNotUnsettled {
		t.Fatalf("Reopen of a stored response: %v", err)
	}
}

// Rule: Settle and Reopen refuse what they cannot do, and change nothing.
func TestSettleRefuses(t *testing.T) {
	g := newGuard(t, newMem())
	if err := g.Settle(t.Context(), "acme", testKey, guard.Response{Status: 201}); !errorsIs(err, guard.ErrNotFound) || !errorsIs(err, idempay.ErrNotFound) {
		t.Fatalf("Settle of an unknown key: %v", err)
	}
	serve(g.Wrap(&scripted{statuses: []int{500}}), post("x")) // released, not unsettled
	if err := g.Settle(t.Context(), "acme", testKey, guard.Response{Status: 201}); err != guard.ErrNotUnsettled {
		t.Fatalf("Settle of a released key: %v", err)
	}
	for _, resp := range []guard.Response{{Status: 500}, {Status: 199}, {Status: 201, Body: make([]byte, guard.DefaultMaxResponse+1)}} {
		if err := g.Settle(t.Context(), "acme", testKey, resp); !errorsIs(err, guard.ErrInvalidResponse) {
			t.Errorf("Settle with status %d, %d bytes: %v", resp.Status, len(resp.Body), err)
		}
	}
}

// Rule: a stored 2xx settles an unsettled mark: it is replayed.
func TestStoredAnswerWinsOverUnsettled(t *testing.T) {
	h := &scripted{unsettled: map[int]bool{1: true}}
	wrapped := newGuard(t, newMem()).Wrap(h)
	serve(wrapped, post("x"))
	if w := serve(wrapped, post("x")); w.Code != http.StatusCreated || w.Header().Get(guard.HeaderReplayed) != "true" {
		t.Fatalf("retry: %d replayed=%q", w.Code, w.Header().Get(guard.HeaderReplayed))
	}
}

// Rule: a response to store that outgrows the limit is sent whole, and
// its replays answer 500 response_not_stored, marked replayed, never a
// second run.
func TestResponseTooLargeToStore(t *testing.T) {
	big := strings.Repeat("b", 100)
	c := 0
	h := newGuard(t, newMem(), guard.WithMaxResponse(64)).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c++
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(big))
	}))
	if w := serve(h, post("x")); w.Code != http.StatusCreated || w.Body.String() != big {
		t.Fatalf("first: %d, %d bytes", w.Code, w.Body.Len())
	}
	w := serve(h, post("x"))
	if w.Code != http.StatusInternalServerError || problemCode(t, w) != guard.CodeNotStored || w.Header().Get(guard.HeaderReplayed) != "true" || c != 1 {
		t.Fatalf("replay: %d %s, runs %d", w.Code, w.Body, c)
	}
}

// Rule: when the store cannot be asked nothing runs, and the answer says
// to retry: 503 with Retry-After.
func TestStoreDownIs503(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	s.failReserve.Store(true)
	c := &counter{}
	w := serve(newGuard(t, s).Wrap(c), post("x"))
	if w.Code != http.StatusServiceUnavailable || problemCode(t, w) != guard.CodeStoreDown || w.Header().Get("Retry-After") != "1" || c.runs.Load() != 0 {
		t.Fatalf("%d %s, runs %d", w.Code, w.Body, c.runs.Load())
	}
}

// Rule: the lease is renewed while the handler runs, so a handler slower
// than its lease still keeps duplicates out.
func TestLeaseIsRenewedWhileTheHandlerRuns(t *testing.T) {
	var runs atomic.Int32
	lease := idempay.MinLease
	h := newGuard(t, newMem(), guard.WithLease(lease)).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		time.Sleep(3 * lease)
		w.WriteHeader(http.StatusCreated)
	}))
	done := make(chan struct{})
	go func() { serve(h, post("x")); close(done) }()
	eventually(t, time.Second, "the first request did not start", func() bool { return runs.Load() == 1 })
	time.Sleep(2 * lease) // past the first lease term
	if w := serve(h, post("x")); w.Code != http.StatusConflict || problemCode(t, w) != guard.CodeKeyInUse {
		t.Fatalf("duplicate after %s: %d %s", 2*lease, w.Code, w.Body)
	}
	<-done
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times", runs.Load())
	}
}

// Rule: Flush reaches the client's writer: a streaming handler streams.
func TestFlushGoesThrough(t *testing.T) {
	h := newGuard(t, newMem()).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("part"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
	}))
	if w := serve(h, post("x")); !w.Flushed || w.Body.String() != "part" {
		t.Fatalf("flushed %v, body %q", w.Flushed, w.Body)
	}
}
