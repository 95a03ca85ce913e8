package idempay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: refunds of one intent from many goroutines of two instances at
// once are admitted one at a time under the ledger's lease: exactly what
// the charge allows succeeds, the rest is refused, nothing is refunded
// beyond the charge (the server would refund anything).
func TestConcurrentRefundsOfOneIntent(t *testing.T) {
	store := memstore.New()
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
	store := memstore.New()
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
