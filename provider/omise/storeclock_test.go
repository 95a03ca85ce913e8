package omise_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: a store clock that read ahead of true time when it stamped a
// reservation never turns a charge into "failed". The lookup's list window
// starts from the reservation's CreatedAt; stamped 22 minutes fast (beyond
// ClockSkew), it would start after the charge Omise made, find nothing and
// "prove" that nothing was charged. The Client saw the store read ahead of
// its own clock when it reserved, and widens every later lookup by it, even
// after the store's clock was set right.
func TestStoreClockAheadAtReservationNeverFails(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	var ahead atomic.Int64
	ahead.Store(int64(22 * time.Minute))
	storeClock := func() time.Time { return clock.Now().Add(time.Duration(ahead.Load())) }
	store := memstore.New(memstore.WithClock(storeClock))
	srv, base := startFake(t, store, []omisetest.Option{omisetest.WithListDelay(time.Hour), omisetest.WithSettings(fakes.Settings{Clock: clock.Now})})
	onClock := func(cfg *idempay.Config) { cfg.Clock = clock.Now }
	first := newClient(t, base, store, onClock)
	srv.Fail("fast", fakes.Post) // charged, answer lost, and not listed for an hour
	ctx := context.Background()
	_, err := first.Charge(ctx, thb("fast", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	ahead.Store(0)                // NTP sets the store's clock right
	clock.Advance(24 * time.Hour) // past the 23-hour retention on either clock
	for _, c := range []*idempay.Client{first, newClient(t, base, store, onClock)} {
		ch, err := c.Charge(ctx, thb("fast", "tokn_test_visa"))
		assert.NotEqual(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "charged, and told failed: %v", err)
		if assert.NoError(t, err) {
			assert.Equal(t, "successful", ch.Status)
		}
	}
	assert.Equal(t, 1, srv.Ledger().Count("fast"))
}
