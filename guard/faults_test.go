package guard_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay"
)

// fakeClock is a clock the test moves; the guard and the store share it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// faultStore wraps a store with faults the test arms: Resolve calls that
// fail, Reserve calls that wait or fail, and the log of every Resolve.
type faultStore struct {
	idempay.KeyStore
	mu sync.Mutex
	// failResolve, if set, is asked before each Resolve; true fails it
	// without reaching the store.
	failResolve func(idempay.Resolution) bool
	// onResolve, if set, runs before each Resolve reaches the store.
	onResolve func(idempay.Resolution)
	// onReserve, if set, runs after each Reserve the store answered and
	// before the answer is returned; an error replaces the answer.
	onReserve  func(idempay.ReserveRequest, idempay.Reservation) error
	resolves   []idempay.Resolution
	resolveErr atomic.Int32
}

var errInjected = errors.New("injected store fault")

func (s *faultStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	res, err := s.KeyStore.Reserve(ctx, r)
	s.mu.Lock()
	hook := s.onReserve
	s.mu.Unlock()
	if err == nil && hook != nil {
		if herr := hook(r, res); herr != nil {
			return idempay.Reservation{}, herr
		}
	}
	return res, err
}

func (s *faultStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	s.mu.Lock()
	s.resolves = append(s.resolves, res)
	fail, hook := s.failResolve, s.onResolve
	s.mu.Unlock()
	if hook != nil {
		hook(res)
	}
	if fail != nil && fail(res) {
		s.resolveErr.Add(1)
		return errInjected
	}
	return s.KeyStore.Resolve(ctx, res)
}

func (s *faultStore) set(f func(s *faultStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *faultStore) log() []idempay.Resolution {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]idempay.Resolution(nil), s.resolves...)
}

// isLock reports whether res writes the guard's unsettled lock.
func isLock(res idempay.Resolution) bool {
	return res.State == idempay.StateOpen && strings.Contains(string(res.Result), `"kind":"unsettled"`)
}

// once returns a predicate true for the first resolution matching pick.
func once(pick func(idempay.Resolution) bool) func(idempay.Resolution) bool {
	var done atomic.Bool
	return func(res idempay.Resolution) bool { return pick(res) && done.CompareAndSwap(false, true) }
}

// headerSpy is a ResponseWriter that reports when the status goes out.
type headerSpy struct {
	http.ResponseWriter
	sent chan int
}

func (h *headerSpy) WriteHeader(code int) {
	select {
	case h.sent <- code:
	default:
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerSpy) Write(b []byte) (int, error) {
	select {
	case h.sent <- http.StatusOK:
	default:
	}
	return h.ResponseWriter.Write(b)
}
