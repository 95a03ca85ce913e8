package omise_test

import (
	"context"
	"errors"
	"net/http"
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

// Rule: the store's lead is judged against the provider's clock too. The
// hosts' clocks are 46 minutes fast and the store's 40: against the hosts
// the store reads behind, and nothing shows that its CreatedAt is 40
// minutes after the charge Omise made. The answers' Date headers show it:
// the Client learns the provider's clock from them, keeps the store's lead
// over it for the fleet, and every later lookup's window starts before the
// charge (seed 520117 of the simulator: told failed, and charged).
func TestStoreClockAheadOfTheProviderWhileTheHostsAreTooNeverFails(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	var ahead atomic.Int64
	ahead.Store(int64(40 * time.Minute))
	storeClock := func() time.Time { return clock.Now().Add(time.Duration(ahead.Load())) }
	store := memstore.New(memstore.WithClock(storeClock))
	srv, base := startFake(t, store, []omisetest.Option{omisetest.WithListDelay(time.Hour), omisetest.WithSettings(fakes.Settings{Clock: clock.Now})})
	hostClock := func() time.Time { return clock.Now().Add(46 * time.Minute) }
	onHost := func(cfg *idempay.Config) { cfg.Clock = hostClock }
	first := newClient(t, base, store, onHost)
	srv.Fail("fast", fakes.Post) // charged, answer lost, and not listed for an hour
	ctx := context.Background()
	_, err := first.Charge(ctx, thb("fast", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	ahead.Store(0)                // NTP sets the store's clock right
	clock.Advance(24 * time.Hour) // past the 23-hour retention on every clock
	for _, c := range []*idempay.Client{newClient(t, base, store, onHost), first} {
		ch, err := c.Charge(ctx, thb("fast", "tokn_test_visa"))
		assert.NotEqual(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "charged, and told failed: %v", err)
		if assert.NoError(t, err) {
			assert.Equal(t, "successful", ch.Status)
		}
	}
	assert.Equal(t, 1, srv.Ledger().Count("fast"))
}

// losingTransport loses every answer once the server has acted on the
// request: the Client learns nothing from it, not even the Date.
type losingTransport struct{}

func (losingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body.Close()
		err = errors.New("connection reset")
	}
	return nil, err
}

// Rule: a lookup whose own answer is the first to tell the provider's
// clock, and shows that the store's reads further ahead of it than the
// window allowed, is asked again from the wider window before its "not
// found" is believed. The Client that charged learnt nothing (every answer
// lost); the one that settles the key past retention reads the store 40
// minutes fast while its host is 46 minutes fast, and knows the provider's
// clock only from the answer to its lookup.
func TestLookupThatFirstShowsTheStoreAheadOfTheProviderIsAskedAgain(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	storeClock := func() time.Time { return clock.Now().Add(40 * time.Minute) }
	store := memstore.New(memstore.WithClock(storeClock))
	srv, base := startFake(t, store, []omisetest.Option{omisetest.WithSettings(fakes.Settings{Clock: clock.Now})})
	onHost := func(cfg *idempay.Config) { cfg.Clock = func() time.Time { return clock.Now().Add(46 * time.Minute) } }
	lost := newClient(t, base, store, onHost, func(cfg *idempay.Config) { cfg.HTTPClient = &http.Client{Transport: losingTransport{}} })
	ctx := context.Background()
	_, err := lost.Charge(ctx, thb("fast", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	require.Equal(t, 1, srv.Ledger().Count("fast"))

	clock.Advance(24 * time.Hour)
	ch, err := newClient(t, base, store, onHost).Charge(ctx, thb("fast", "tokn_test_visa"))
	assert.NotEqual(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "charged, and told failed: %v", err)
	if assert.NoError(t, err) {
		assert.Equal(t, "successful", ch.Status)
	}
	assert.Equal(t, 1, srv.Ledger().Count("fast"))
}
