package guard_test

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// Rule: concurrent requests with one key run the handler once; each of
// the others gets 409 (while it runs) or the replay (after), never a
// second run. The article's check-then-insert guard let both through.
func TestConcurrentDuplicatesRunTheHandlerOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		const n = 12
		var runs, answered atomic.Int32
		release := make(chan struct{})
		h := newGuard(t, store).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			<-release // hold the key until every duplicate is answered
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte("charged once"))
		}))
		codes := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				w := serve(h, post(`{"order":"o-1"}`))
				answered.Add(1)
				codes <- w.Code
			})
		}
		eventually(t, 10*time.Second, "the duplicates were not all answered", func() bool { return answered.Load() == n-1 })
		close(release)
		wg.Wait()
		close(codes)
		count := map[int]int{}
		for c := range codes {
			count[c]++
		}
		if runs.Load() != 1 || count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
			t.Fatalf("handler ran %d times; answers %v; want 1 run, one 201 and %d 409s", runs.Load(), count, n-1)
		}
		w := serve(h, post(`{"order":"o-1"}`))
		if w.Code != http.StatusCreated || w.Body.String() != "charged once" || w.Header().Get(guard.HeaderReplayed) != "true" {
			t.Fatalf("after the run: %d %q replayed=%q; want the stored 201", w.Code, w.Body, w.Header().Get(guard.HeaderReplayed))
		}
		if runs.Load() != 1 {
			t.Fatalf("the replay ran the handler")
		}
	})
}

// Rule: a replay carries the stored status, the replay headers and the
// body byte for byte, with Idempotency-Replayed: true; headers never
// stored (Set-Cookie, Authorization) and headers not in the replay list
// are left out; the first answer is not marked replayed.
func TestReplayIsByteForByte(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		body := []byte("\x00\xff binary \r\n\"quoted\" \xe2\x82\xac and trailing space ")
		h := newGuard(t, store, guard.WithReplayHeaders("X-Order-Id")).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Location", "/orders/o-1")
			w.Header().Set("X-Order-Id", "o-1")
			w.Header().Set("X-Internal-Trace", "t-123")
			w.Header().Set("Set-Cookie", "session=secret")
			w.Header().Set("Authorization", "Bearer secret")
			w.WriteHeader(http.StatusAccepted)
			w.Write(body[:5])
			w.Write(body[5:])
		}))
		first := serve(h, post("x"))
		if first.Code != http.StatusAccepted || !bytes.Equal(first.Body.Bytes(), body) || first.Header().Get(guard.HeaderReplayed) != "" {
			t.Fatalf("first answer %d %q replayed=%q", first.Code, first.Body, first.Header().Get(guard.HeaderReplayed))
		}
		again := serve(h, post("x"))
		if again.Code != http.StatusAccepted || !bytes.Equal(again.Body.Bytes(), body) {
			t.Fatalf("replay %d %q, want 202 %q", again.Code, again.Body, body)
		}
		want := map[string]string{"Content-Type": "application/octet-stream", "Location": "/orders/o-1",
			"X-Order-Id": "o-1", guard.HeaderReplayed: "true", "Content-Length": strconv.Itoa(len(body))}
		for k, v := range want {
			if got := again.Header().Get(k); got != v {
				t.Errorf("replay header %s = %q, want %q", k, got, v)
			}
		}
		for _, k := range []string{"Set-Cookie", "Authorization", "X-Internal-Trace"} {
			if v := again.Header().Values(k); len(v) > 0 {
				t.Errorf("replay carries %s: %q", k, v)
			}
		}
	})
}

// Rule: a key reused with another request (another body, path, query or
// method) is answered 422 whether the first is running or done, and the
// handler does not run for it.
func TestKeyReusedWithAnotherRequestIs422(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		c := &counter{}
		h := newGuard(t, store).Wrap(c)
		if w := serve(h, post(`{"amount":1500}`)); w.Code != http.StatusCreated {
			t.Fatalf("first: %d %s", w.Code, w.Body)
		}
		others := map[string]*http.Request{
			"body":   post(`{"amount":150000}`),
			"path":   newRequest(http.MethodPost, "/refund", "acme", testKey, `{"amount":1500}`),
			"query":  newRequest(http.MethodPost, "/checkout?capture=false", "acme", testKey, `{"amount":1500}`),
			"method": newRequest(http.MethodPatch, "/checkout", "acme", testKey, `{"amount":1500}`),
		}
		for name, r := range others {
			w := serve(h, r)
			if w.Code != http.StatusUnprocessableEntity || problemCode(t, w) != guard.CodeKeyReused {
				t.Errorf("other %s: %d %s, want 422 %s", name, w.Code, w.Body, guard.CodeKeyReused)
			}
		}
		if c.runs.Load() != 1 {
			t.Fatalf("handler ran %d times", c.runs.Load())
		}
	})
}

// Rule: while the first request runs, a reuse with another body is 422
// too, not 409: retrying it would never help.
func TestKeyReusedWhileRunningIs422(t *testing.T) {
	store := idempay.KeyStore(newMem())
	started, release := make(chan struct{}), make(chan struct{})
	h := newGuard(t, store).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	}))
	done := make(chan struct{})
	go func() { serve(h, post("a")); close(done) }()
	<-started
	w := serve(h, post("b"))
	close(release)
	<-done
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("reuse while running: %d %s, want 422", w.Code, w.Body)
	}
}

// Rule: keys are scoped by caller. Two tenants sending the same key and
// body are two requests; each replay answers its own tenant's response.
func TestTenantsNeverShareAKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		c := &counter{}
		h := newGuard(t, store).Wrap(c)
		a := serve(h, newRequest(http.MethodPost, "/checkout", "tenant-a", testKey, "same"))
		b := serve(h, newRequest(http.MethodPost, "/checkout", "tenant-b", testKey, "same"))
		if c.runs.Load() != 2 || a.Body.String() == b.Body.String() || b.Header().Get(guard.HeaderReplayed) != "" {
			t.Fatalf("runs %d; a %q; b %q replayed=%q: tenant b got tenant a's answer", c.runs.Load(), a.Body, b.Body, b.Header().Get(guard.HeaderReplayed))
		}
		a2 := serve(h, newRequest(http.MethodPost, "/checkout", "tenant-a", testKey, "same"))
		if a2.Body.String() != a.Body.String() || a2.Header().Get(guard.HeaderReplayed) != "true" {
			t.Fatalf("tenant a's replay %q, want %q", a2.Body, a.Body)
		}
	})
}

// Rule: a request without a known caller is refused before anything is
// stored.
func TestNoIdentityIs401(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	c := &counter{}
	w := serve(newGuard(t, s).Wrap(c), newRequest(http.MethodPost, "/checkout", "", testKey, "x"))
	if w.Code != http.StatusUnauthorized || problemCode(t, w) != guard.CodeNoIdentity || c.runs.Load() != 0 || s.trips() != 0 {
		t.Fatalf("%d %s, runs %d: want 401 without a store call", w.Code, w.Body, c.runs.Load())
	}
}

// Rule: methods that are not guarded pass through, key or no key.
func TestUnguardedMethodsPassThrough(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	c := &counter{}
	h := newGuard(t, s).Wrap(c)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		if w := serve(h, newRequest(m, "/checkout", "", "", "")); w.Code != http.StatusCreated {
			t.Errorf("%s: %d", m, w.Code)
		}
	}
	if c.runs.Load() != 3 || s.trips() != 0 {
		t.Fatalf("runs %d, store trips %d", c.runs.Load(), s.trips())
	}
	h = newGuard(t, s, guard.WithMethods(http.MethodPut)).Wrap(c)
	if w := serve(h, newRequest(http.MethodPut, "/checkout", "acme", "", "")); w.Code != http.StatusBadRequest {
		t.Fatalf("PUT under WithMethods(PUT) without a key: %d", w.Code)
	}
	if w := serve(h, newRequest(http.MethodPost, "/checkout", "", "", "")); w.Code != http.StatusCreated {
		t.Fatalf("POST under WithMethods(PUT): %d", w.Code)
	}
}

// Rule: the handler reads the decoded key and the caller from its
// context, to pass them on as idempay.ChargeRequest.Key.
func TestHandlerSeesKeyAndIdentity(t *testing.T) {
	var key, id string
	var okK, okI bool
	h := newGuard(t, newMem()).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, okK = guard.KeyFrom(r.Context())
		id, okI = guard.IdentityFrom(r.Context())
	}))
	r := post("x")
	r.Header.Set(guard.HeaderKey, `"`+testKey+`"`)
	serve(h, r)
	if key != testKey || id != "acme" || !okK || !okI {
		t.Fatalf("KeyFrom %q %v, IdentityFrom %q %v", key, okK, id, okI)
	}
	if _, ok := guard.KeyFrom(r.Context()); ok {
		t.Fatal("KeyFrom outside a guarded handler reports a key")
	}
}
