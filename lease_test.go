package idempay_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// releaseSpy reports the outcome of every lease release (Resolve with
// State open) made through it, each held until gate is closed: the
// releasing instance is paused.
type releaseSpy struct {
	idempay.KeyStore
	released chan error
	gate     chan struct{}
}

func (s *releaseSpy) Resolve(ctx context.Context, res idempay.Resolution) error {
	if res.State == idempay.StateOpen {
		<-s.gate
	}
	err := s.KeyStore.Resolve(ctx, res)
	if res.State == idempay.StateOpen {
		s.released <- err
	}
	return err
}

// syncBuffer is a log sink safe to read while the client may still write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// renewalBlocker lets a flight's first Reserve through and fails every
// later one (the heartbeat's renewals): the instance is cut off from the
// store, as in a long pause, and its lease runs out.
type renewalBlocker struct {
	idempay.KeyStore
	calls atomic.Int32
}

func (s *renewalBlocker) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.calls.Add(1) > 1 {
		return idempay.Reservation{}, errors.New("store unreachable from this instance")
	}
	return s.KeyStore.Reserve(ctx, r)
}

// Rule: a flight whose lease ran out while its request was held (its
// renewals could not reach the store) stops its request, and when it is
// taken over by another instance before its release arrives (it was
// paused), it does not free the new holder's lease: its release names it
// as the owner and the store refuses it
// (ErrLeaseLost, logged at debug level, not as a warning). A third
// instance is still refused and sends nothing.
func TestLateReleaseKeepsTheTakeoverLease(t *testing.T) {
	store := memstore.New()
	blocked := &renewalBlocker{KeyStore: store}
	spy := &releaseSpy{KeyStore: blocked, released: make(chan error, 4), gate: make(chan struct{})}
	const lease = 300 * time.Millisecond

	unblock := make(chan struct{})
	arrived := make(chan struct{}, 4)
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // every request is held until its sender gives up
		case <-unblock:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(unblock) }) // runs before newStub's server.Close
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	instance := func(st idempay.KeyStore) *idempay.Client {
		return newClient(t, s.server.URL, st, func(cfg *idempay.Config) {
			cfg.Lease, cfg.Logger = lease, logger
		})
	}
	a, b, c := instance(spy), instance(store), instance(store)

	// A reserves and sends; its request is held past its lease.
	doneA := make(chan error, 1)
	go func() {
		_, err := a.Charge(context.Background(), order("o"))
		doneA <- err
	}()
	recv(t, arrived)
	leaseA, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)

	// A's lease runs out in the store and B takes the intent over.
	time.Sleep(time.Until(leaseA.LeaseUntil))
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	go func() { _, _ = b.Charge(ctxB, order("o")) }()
	recv(t, arrived)
	leaseB, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)
	require.NotEqual(t, leaseA.LeaseOwner, leaseB.LeaseOwner, "B holds the lease now")
	require.Equal(t, leaseA.Key, leaseB.Key, "one key for the intent")

	// A noticed its lease was gone and stopped its request; its release,
	// paused until now, arrives after B's takeover. The outcome is unknown.
	close(spy.gate)
	require.ErrorIs(t, recv(t, doneA), idempay.ErrOutcomeUnknown)
	assert.ErrorIs(t, recv(t, spy.released), idempay.ErrLeaseLost, "A's late release is refused")

	rec, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)
	assert.Equal(t, leaseB.LeaseOwner, rec.LeaseOwner, "B keeps its lease")

	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrInProgress, "a third instance must wait for B")
	assert.Equal(t, int32(2), s.hits.Load(), "A and B sent; the third instance sent nothing")

	// The release is logged just after the store answered the spy: wait
	// for the line rather than race it.
	assert.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "level=DEBUG msg=\"idempay: lease already lost")
	}, 5*time.Second, time.Millisecond, "the refused release is logged at debug level")
	assert.NotContains(t, logs.String(), "could not release lease", "a lost lease is expected, not a warning")
}

// recv takes the next value from ch, or fails the test after 5 seconds.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing received within 5s")
		panic("unreachable")
	}
}
