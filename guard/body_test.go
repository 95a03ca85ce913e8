package guard_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay/guard"
)

// Rule: a body over the limit is answered 413 before the store is asked;
// one at the limit reaches the handler whole, readable again by GetBody.
func TestBodyLimit(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	var got, again string
	var length int64
	h := newGuard(t, s, guard.WithMaxBody(10)).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, length = string(b), r.ContentLength
		rc, _ := r.GetBody()
		b, _ = io.ReadAll(rc)
		again = string(b)
	}))
	w := serve(h, post(strings.Repeat("x", 11)))
	if w.Code != http.StatusRequestEntityTooLarge || problemCode(t, w) != guard.CodeBodyTooLarge || s.trips() != 0 {
		t.Fatalf("11 bytes over a limit of 10: %d %s", w.Code, w.Body)
	}
	r := post(strings.Repeat("x", 11))
	r.ContentLength = -1 // chunked: the limit holds without a length
	if w := serve(h, r); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked body over the limit: %d", w.Code)
	}
	w = serve(h, post("0123456789"))
	if w.Code != http.StatusOK || got != "0123456789" || again != got || length != 10 {
		t.Fatalf("at the limit: %d; handler read %q, GetBody %q, ContentLength %d", w.Code, got, again, length)
	}
}
