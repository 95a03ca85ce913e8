package idempay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: refunds of one intent from many goroutines of two instances at
// once are admitted one at a time under the ledger's lease: exactly what
// the charge allows succeeds, the rest is refused, nothing is refunded
// beyond the charge (the server would refund anything).
func TestConcurrentRefundsOfOneIntent(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true, Latency: 2 * time.Millisecond})
	a, b := opsClient(t, s, store), opsClient(t, s, store)
	charged(t, a, "o", 1500, false)
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		c := []*idempay.Client{a, b}[i%2]
		wg.Go(func() { _, errs[i] = c.Refund(context.Background(), refundOf("o", fmt.Sprintf("rf-%02d", i), 100)) })
	}
	wg.Wait()
	ok, refused := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case assert.ErrorIs(t, err, idempay.ErrRefundExceeds, "refund %d", i):
			refused++
		}
	}
	assert.Equal(t, 15, ok)
	assert.Equal(t, 25, refused)
	assert.Equal(t, int64(1500), s.Ops().Refunded("o"))
	require.NoError(t, s.Ops().Check())
	l, err := b.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), l.Refunded)
	assert.Zero(t, l.Refundable)
}

// Rule: one refund asked for by many goroutines of two instances at once
// is made once: callers in one process share its flight; the other
// instance is told it is in progress, then answers it from the store.
func TestOneRefundFromManyCallers(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Latency: 20 * time.Millisecond})
	a, b := opsClient(t, s, store), opsClient(t, s, store)
	charged(t, a, "o", 1500, false)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		c := []*idempay.Client{a, b}[i%2]
		wg.Go(func() { _, errs[i] = c.Refund(context.Background(), refundOf("o", "rf-1", 700)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			assert.ErrorIs(t, err, idempay.ErrInProgress, "call %d", i)
			assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
		}
	}
	for _, c := range []*idempay.Client{a, b} {
		op, err := c.Refund(context.Background(), refundOf("o", "rf-1", 700))
		require.NoError(t, err)
		assert.Equal(t, idempay.ReplayFromStore, op.ReplayedFrom)
	}
	assert.Equal(t, 1, s.Ops().Count("rf-1"))
	assert.Len(t, s.Stats().Ops.KeysByID["rf-1"], 1, "one key")
}

// Rule: a refund's flight outlives an impatient caller (ErrStoppedWaiting,
// outcome unknown for that caller) and records its outcome; Close waits
// for it, and refuses new operations with ErrClosed.
func TestRefundFlightOutlivesItsCallerAndClose(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	release := make(chan struct{})
	s.answer("rf-1", held(release, opAnswer(201, "re_late", "succeeded", 500)))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Refund(ctx, refundOf("o", "rf-1", 500)); errc <- err }()
	require.Eventually(t, func() bool { return s.requests("rf-1") == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	err := recv(t, errc)
	require.ErrorIs(t, err, idempay.ErrStoppedWaiting)
	oe := opErr(t, err, idempay.OutcomeUnknown)
	assert.NotEmpty(t, oe.Key)

	closed := make(chan error, 1)
	go func() { closed <- c.Close(context.Background()) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a refund was in flight")
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	require.NoError(t, recv(t, closed))
	rec, err := recordOf(t, store, idempay.OpRefund, "rf-1")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State, "the flight recorded its outcome")
	_, err = c.Refund(context.Background(), refundOf("o", "rf-2", 100))
	require.ErrorIs(t, err, idempay.ErrClosed)
	opErr(t, err, idempay.OutcomeUnknown)

	op, err := opsClient(t, s, store).Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, "re_late", op.ID)
	assert.Equal(t, idempay.ReplayFromStore, op.ReplayedFrom)
}
