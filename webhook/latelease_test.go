package webhook_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
)

// lateReserve is a store whose first Reserve answers only after the lease
// it granted has run out: the write landed, the reply was slow (a GC
// pause, a congested link). While that reply is on its way, meanwhile runs:
// another delivery, free to take the lapsed lease.
type lateReserve struct {
	idempay.KeyStore
	clk       *fakes.Clock
	by        time.Duration
	delayed   atomic.Bool
	meanwhile func()
}

func (s *lateReserve) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	res, err := s.KeyStore.Reserve(ctx, r)
	if s.delayed.CompareAndSwap(false, true) {
		s.clk.Advance(s.by)
		s.meanwhile()
	}
	return res, err
}

// Rule: the Deduper starts the handler only while the delivery's lease is
// held at that moment. A Reserve whose answer arrives after the lease ran
// out is no licence: another delivery may have taken the lease and run the
// handler meanwhile, so this one answers "in progress" and runs nothing.
func TestDeduperLateReserveRunsNothing(t *testing.T) {
	t.Parallel()
	clk := newClock()
	store := &lateReserve{KeyStore: memstore.New(memstore.WithClock(clk.Now)), clk: clk, by: 2 * time.Minute}
	d := newDeduper(t, store, clk) // a lease of a minute
	var h counter
	var second webhook.Delivery
	var secondErr error
	store.meanwhile = func() {
		second, secondErr = d.Do(context.Background(), "evt_1", eventBody, h.fn)
	}

	got, err := d.Do(context.Background(), "evt_1", eventBody, h.fn)
	require.NoError(t, secondErr, "the delivery that took the lapsed lease")
	require.Equal(t, webhook.Handled, second)
	require.EqualValues(t, 1, h.runs.Load(), "the handler ran once for one event")
	require.ErrorIs(t, err, webhook.ErrInProgress, "the late delivery ran nothing (answered %v, %v)", got, err)
	require.ErrorIs(t, err, idempay.ErrLeaseLost)

	rec, err := store.Load(context.Background(), d.Namespace(), "evt_1")
	require.NoError(t, err)
	require.Equal(t, idempay.StateSucceeded, rec.State)
}
