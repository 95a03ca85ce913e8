package guard_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

// Rule: a released record (a 5xx, a 4xx not marked final, a panic) is
// deleted by the store's Expire like a closed one, counted from its
// release: failing requests under fresh keys cannot grow the store for
// good. A retry before then still runs the handler again.
func TestReleasedRecordsExpire(t *testing.T) {
	clock := newFakeClock()
	store := memstore.New(memstore.WithClock(clock.Now))
	g := newGuard(t, store, guard.WithClock(clock.Now))
	h := &scripted{statuses: []int{500, 500}}
	for _, key := range []string{"key-aaaaaaaaaaaaaaaa-1", "key-aaaaaaaaaaaaaaaa-2"} {
		if w := serve(g.Wrap(h), newRequest(http.MethodPost, "/checkout", "acme", key, "x")); w.Code != 500 {
			t.Fatalf("%s: %d", key, w.Code)
		}
	}
	if open, _ := store.ListOpen(t.Context(), g.Namespace(), idempay.Cursor{}, 10); len(open) != 0 {
		t.Fatalf("%d released records are still open: Expire never deletes them", len(open))
	}
	clock.Add(25 * time.Hour)
	n, err := store.Expire(t.Context(), 24*time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("Expire deleted %d (%v), want the 2 released records", n, err)
	}
}

// Rule: a released key runs the handler again on its retry, under a new
// attempt of the record, as often as it is released; the response then
// stored is replayed.
func TestReleasedKeyRunsAgain(t *testing.T) {
	forEachStore(t, func(t *testing.T, store idempay.KeyStore) {
		h := &scripted{statuses: []int{500, 503, 409}}
		wrapped := newGuard(t, store).Wrap(h)
		for i, want := range []int{500, 503, 409, 201} {
			if w := serve(wrapped, post("x")); w.Code != want {
				t.Fatalf("request %d: %d, want %d", i+1, w.Code, want)
			}
		}
		if w := serve(wrapped, post("x")); w.Body.String() != "run IIII" || h.runs.Load() != 4 {
			t.Fatalf("replay %q after %d runs", w.Body, h.runs.Load())
		}
		if w := serve(wrapped, post("other")); w.Code != http.StatusUnprocessableEntity {
			t.Fatalf("other body: %d", w.Code)
		}
	})
}

// Rule: Guard.Unsettled reads the locked records only: released ones do
// not stay in the open list for it to page through.
func TestUnsettledSkipsNoReleasedPages(t *testing.T) {
	store := &countingStore{KeyStore: memstore.New()}
	g := newGuard(t, store)
	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	for i := range 250 {
		key := "key-bbbbbbbbbbbbbbbb-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		serve(g.Wrap(fail), newRequest(http.MethodPost, "/checkout", "acme", key, "x"))
	}
	store.trips()
	n := 0
	for _, err := range g.Unsettled(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 0 || store.list.Load() != 1 {
		t.Fatalf("%d unsettled, %d pages read; want 0 and 1", n, store.list.Load())
	}
}
