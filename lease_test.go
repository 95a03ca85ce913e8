package idempay_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// releaseSpy reports the outcome of every lease release (Resolve with
// State open) made through it.
type releaseSpy struct {
	idempay.KeyStore
	released chan error
}

func (s *releaseSpy) Resolve(ctx context.Context, res idempay.Resolution) error {
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

// Rule: a client whose lease ran out while its request was held, and was
// taken over by another instance, does not free the new holder's lease
// when it gives up: its release names it as the owner and the store
// refuses it (ErrLeaseLost, logged at debug level, not as a warning). A
// third instance is still refused and sends nothing.
func TestLateReleaseKeepsTheTakeoverLease(t *testing.T) {
	store := memstore.New()
	spy := &releaseSpy{KeyStore: store, released: make(chan error, 4)}
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}

	unblock := make(chan struct{})
	arrived := make(chan struct{}, 4)
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-unblock // every request is held: the test decides who gives up
	})
	t.Cleanup(func() { close(unblock) }) // runs before newStub's server.Close
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	instance := func(st idempay.KeyStore) *idempay.Client {
		return newClient(t, s.server.URL, st, func(cfg *idempay.Config) {
			cfg.Clock, cfg.Lease, cfg.Logger = clock, time.Minute, logger
		})
	}
	a, b, c := instance(spy), instance(store), instance(store)

	// A reserves and sends; its request is held past its lease.
	ctxA, cancelA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() {
		_, err := a.Charge(ctxA, order("o"))
		doneA <- err
	}()
	recv(t, arrived)
	leaseA, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)

	// A's lease runs out (on the shared clock) and B takes the intent over.
	advance(time.Minute)
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	go func() { _, _ = b.Charge(ctxB, order("o")) }()
	recv(t, arrived)
	leaseB, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)
	require.NotEqual(t, leaseA.LeaseOwner, leaseB.LeaseOwner, "B holds the lease now")
	require.Equal(t, leaseA.Key, leaseB.Key, "one key for the intent")

	// A gives up: the outcome is unknown and it releases what it thinks is
	// still its lease.
	cancelA()
	require.ErrorIs(t, recv(t, doneA), idempay.ErrOutcomeUnknown)
	assert.ErrorIs(t, recv(t, spy.released), idempay.ErrLeaseLost, "A's late release is refused")

	rec, err := store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)
	assert.Equal(t, leaseB.LeaseOwner, rec.LeaseOwner, "B keeps its lease")
	assert.True(t, rec.LeaseUntil.Equal(leaseB.LeaseUntil), "B's lease keeps its end")

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
