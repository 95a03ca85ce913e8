package guard_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idempay/idempay/guard"
)

// Rule: the stored body is what the handler wrote, not what the
// connection took: an http.TimeoutHandler outside the guard, whose writer
// refuses every byte once it has answered 503, does not make every retry
// the replay of an empty 201. (http.TimeoutHandler buffers its handler's
// answer and copies it out after the handler returns, so behind it the
// guard's holding changes nothing the client sees.)
func TestStoredBodyUnderATimeoutHandler(t *testing.T) {
	g := newGuard(t, newMem())
	spy := &headerSpy{ResponseWriter: httptest.NewRecorder(), sent: make(chan int, 1)}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-spy.sent // the TimeoutHandler has answered 503
		w.WriteHeader(http.StatusCreated)
		// A 201 is held until its record is written (CK-3): the guard
		// takes the write, and meets the TimeoutHandler's refusal only
		// when it sends the answer, after the close.
		if _, err := w.Write([]byte(`{"charge":"ch_1"}`)); err != nil {
			t.Errorf("write of a held answer: %v", err)
		}
	})
	// The timeout only bounds how long the guard's Reserve may take; the
	// handler always outlives it.
	done := make(chan struct{})
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		g.Wrap(h).ServeHTTP(w, r)
	})
	http.TimeoutHandler(guarded, 500*time.Millisecond, "timeout").ServeHTTP(spy, post("x"))
	<-done // the TimeoutHandler does not wait for its handler
	if code := spy.ResponseWriter.(*httptest.ResponseRecorder).Code; code != http.StatusServiceUnavailable {
		t.Fatalf("first: %d", code)
	}
	w := serve(g.Wrap(h), post("x"))
	if w.Code != http.StatusCreated || w.Body.String() != `{"charge":"ch_1"}` {
		t.Fatalf("replay %d %q, want the 201 the handler wrote", w.Code, w.Body)
	}
}

// shortWriter takes the first limit bytes and then fails, as a client
// that disconnects mid-answer makes net/http's writer do.
type shortWriter struct {
	*httptest.ResponseRecorder
	limit int
}

func (s *shortWriter) Write(b []byte) (int, error) {
	room := s.limit - s.Body.Len()
	if room >= len(b) {
		return s.ResponseRecorder.Write(b)
	}
	n, _ := s.ResponseRecorder.Write(b[:max(room, 0)])
	return n, errors.New("write: connection reset by peer")
}

// Rule: a frontend that disconnects mid-answer does not cut the stored
// body: the retry is replayed all of it.
func TestStoredBodyAfterADisconnect(t *testing.T) {
	g := newGuard(t, newMem())
	body := bytes.Repeat([]byte("0123456789abcdef"), 49152/16)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		for i := 0; i < len(body); i += 4096 {
			w.Write(body[i:min(i+4096, len(body))])
		}
	})
	g.Wrap(h).ServeHTTP(&shortWriter{ResponseRecorder: httptest.NewRecorder(), limit: 4096}, post("x"))
	w := serve(g.Wrap(h), post("x"))
	if w.Code != http.StatusCreated || !bytes.Equal(w.Body.Bytes(), body) {
		t.Fatalf("replay %d of %d bytes, want all %d", w.Code, w.Body.Len(), len(body))
	}
}

// Rule: the headers that describe the body as it went out are replayed
// with it: its encoding (a gzip middleware inside the guard), language,
// disposition, and when to come back.
func TestRepresentationHeadersReplayed(t *testing.T) {
	g := newGuard(t, newMem())
	want := map[string]string{
		"Content-Encoding":    "gzip",
		"Content-Type":        "application/json",
		"Content-Language":    "ja",
		"Content-Disposition": `attachment; filename="receipt.json"`,
		"Retry-After":         "5",
		"Vary":                "Accept-Encoding",
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range want {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte{0x1f, 0x8b, 0x08, 0x00})
	})
	serve(g.Wrap(h), post("x"))
	w := serve(g.Wrap(h), post("x"))
	for k, v := range want {
		if got := w.Header().Get(k); got != v {
			t.Errorf("replayed %s %q, want %q", k, got, v)
		}
	}
}

// Rule: a Content-Type the handler left to sniffing is the same on every
// replay as on the first answer, however the handler split its writes:
// it is fixed from the first bytes written.
func TestSniffedContentTypeSameOnReplay(t *testing.T) {
	g := newGuard(t, newMem())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("   "))
		w.(http.Flusher).Flush()
		w.Write([]byte("<html><body>paid</body></html>"))
	})
	first := serve(g.Wrap(h), post("x"))
	replay := serve(g.Wrap(h), post("x"))
	if a, b := first.Header().Get("Content-Type"), replay.Header().Get("Content-Type"); a == "" || a != b {
		t.Fatalf("Content-Type %q first, %q on replay", a, b)
	}
}

// Rule: a handler that asked for no Content-Type (the header set to nil,
// so net/http does not sniff) gets none on replay either, over a real
// connection, where net/http sniffs whatever has no type.
func TestNoContentTypeStaysNone(t *testing.T) {
	g := newGuard(t, newMem())
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("<html>raw</html>"))
	})))
	defer srv.Close()
	for i := range 2 {
		req := post("x")
		req.RequestURI, req.URL.Scheme, req.URL.Host = "", "http", srv.Listener.Addr().String()
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ct, ok := resp.Header["Content-Type"]; ok {
			t.Fatalf("answer %d (replayed=%q): Content-Type %q, want none", i+1, resp.Header.Get(guard.HeaderReplayed), ct)
		}
	}
}
