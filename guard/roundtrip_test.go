package guard_test

import (
	"net/http"
	"testing"
)

// Rule: a guarded request costs at most two store round trips more than
// the handler alone on a first request (Reserve, Close) and one on a
// replay (Reserve); a 409, a 422 and an unsettled retry cost what they
// say below, and a request refused before the store costs none. The
// heartbeat's renewals come on top only for handlers slower than a third
// of the lease (DefaultLease/3: 3.3 s); these handlers are fast.
func TestStoreRoundTrips(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	wrapped := newGuard(t, s).Wrap(&counter{})
	steps := []struct {
		name string
		req  *http.Request
		code int
		max  int
	}{
		{"first request", post("x"), http.StatusCreated, 2},
		{"replay", post("x"), http.StatusCreated, 1},
		{"reused key (422)", post("y"), http.StatusUnprocessableEntity, 1},
		{"no key (400)", newRequest(http.MethodPost, "/checkout", "acme", "", "x"), http.StatusBadRequest, 0},
	}
	for _, st := range steps {
		if w := serve(wrapped, st.req); w.Code != st.code {
			t.Fatalf("%s: %d, want %d", st.name, w.Code, st.code)
		}
		if n := s.trips(); n > st.max {
			t.Errorf("%s: %d store round trips, want at most %d", st.name, n, st.max)
		} else {
			t.Logf("%s: %d store round trips", st.name, n)
		}
	}

	unsettled := newGuard(t, s).Wrap(&scripted{statuses: []int{502}, unsettled: map[int]bool{1: true}})
	r := newRequest(http.MethodPost, "/checkout", "acme", "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "x")
	serve(unsettled, r)
	if n := s.trips(); n != 2 {
		t.Errorf("first request, unsettled: %d round trips, want 2", n)
	}
	serve(unsettled, newRequest(http.MethodPost, "/checkout", "acme", "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "x"))
	if n := s.trips(); n != 2 {
		t.Errorf("retry of an unsettled request (409): %d round trips, want 2 (claim and give back)", n)
	} else {
		t.Logf("retry of an unsettled request (409): %d store round trips", n)
	}
}

// Rule: a 409 while the first request runs costs one round trip.
func TestInUseCostsOneRoundTrip(t *testing.T) {
	s := &countingStore{KeyStore: newMem()}
	started, release := make(chan struct{}), make(chan struct{})
	h := newGuard(t, s).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	}))
	done := make(chan struct{})
	go func() { serve(h, post("x")); close(done) }()
	<-started
	s.trips()
	if w := serve(h, post("x")); w.Code != http.StatusConflict {
		t.Fatalf("duplicate: %d", w.Code)
	}
	n := s.trips()
	close(release)
	<-done
	if n != 1 {
		t.Fatalf("409: %d round trips, want 1", n)
	}
}
