package idempay_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: the age of a key comes from the store's clock. A record written by
// an instance whose clock runs two hours fast is as old as the store says:
// at 23 hours on the store's clock its key is never resent, whatever the
// writer's clock said when it was reserved.
func TestKeyAgeIsReadOnTheStoresClock(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	storeClock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	store := memstore.New(memstore.WithClock(storeClock))
	s := newStub(t, store, drop)
	fast := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
		cfg.Clock = func() time.Time { return storeClock().Add(2 * time.Hour) }
	})
	slow := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
		cfg.Clock = func() time.Time { return storeClock().Add(-2 * time.Hour) }
	})
	_, err := fast.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	sent := s.hits.Load()

	storeNow.Add(int64(23*time.Hour + time.Second))
	for _, c := range []*idempay.Client{fast, slow} {
		_, err = c.Charge(context.Background(), order("o"))
		assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	}
	assert.Equal(t, sent, s.hits.Load(), "no resend once the store says the key is 23 h old")
}

// steppedBack is a store whose clock has stepped back by back since it
// stamped its records (NTP, a VM migration, a failover to another host):
// every Reservation it answers reports a Now that much earlier.
type steppedBack struct {
	idempay.KeyStore
	back atomic.Int64 // nanoseconds
}

func (s *steppedBack) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	res, err := s.KeyStore.Reserve(ctx, r)
	res.Now = res.Now.Add(-time.Duration(s.back.Load()))
	if res.Created {
		// What the stepped-back clock would have stamped on a new attempt.
		res.Record.CreatedAt = res.Now
	}
	return res, err
}

// Rule: a store clock that stepped back never makes a key look younger
// than it is. A record whose CreatedAt is after the store's Now has an age
// nobody can tell: its key is never resent (it may be past the provider's
// retention), the intent is settled by lookup or left to reconcile.
func TestStoreClockSteppedBackNeverResends(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	store := &steppedBack{KeyStore: memstore.New(memstore.WithClock(clock))}
	s := newStub(t, store, drop)
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	sent := s.hits.Load()

	// 25 hours on, the key is past the provider's retention; the store's
	// clock then steps back 26 hours: its Now is an hour before the
	// record's CreatedAt.
	storeNow.Add(int64(25 * time.Hour))
	store.back.Store(int64(26 * time.Hour))
	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, sent, s.hits.Load(), "no resend of a key whose age cannot be told")
}

// Rule: a Claim's time left by MaxAge never grows: a renewal whose store
// clock reads earlier than the last one (or earlier than the record's
// CreatedAt) does not make the attempt younger.
func TestClaimAgeNeverShrinks(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	store := &steppedBack{KeyStore: memstore.New(memstore.WithClock(clock))}
	cfg := idempay.ClaimConfig{Store: store, Lease: time.Minute, MaxAge: time.Hour, Clock: clock}
	ctx := context.Background()
	req := idempay.ReserveRequest{Namespace: "ns", ID: "o", Attempt: 1, Key: "k1", Fingerprint: "fp"}
	cl, res, err := cfg.Reserve(ctx, req)
	require.NoError(t, err)
	require.True(t, res.Claimed)
	require.NoError(t, cl.Release(ctx))

	// Reclaimed with the store's clock an hour and a minute behind the
	// record's CreatedAt: the attempt's age is unknown, so it may be past
	// MaxAge already; nothing may be sent under this claim.
	store.back.Store(int64(time.Hour + time.Minute))
	cl, res, err = cfg.Reserve(ctx, req)
	require.NoError(t, err)
	require.True(t, res.Claimed)
	assert.False(t, cl.Held(), "an attempt of unknown age is held for nothing but closing")
	assert.ErrorIs(t, context.Cause(cl.Context()), idempay.ErrClaimAged)
	require.NoError(t, cl.Release(ctx))
}

// Rule: a store clock that steps back by less than a key's age still never
// makes the key look younger to a Client that saw the clock before the
// step: the Client knows the store's clock has read later, so the age it
// reads now is no proof, and the key is never resent.
func TestStoreClockStepBackSmallerThanTheAgeNeverResends(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	store := &steppedBack{KeyStore: memstore.New(memstore.WithClock(clock))}
	s := newStub(t, store, drop)
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	// 25 hours on, the Client sees the store's clock (another charge).
	storeNow.Add(int64(25 * time.Hour))
	_, _ = c.Charge(context.Background(), order("p"))
	sent := s.hits.Load()

	// The store's clock steps back 3 hours: o's key would read 22 hours
	// old, younger than the 23-hour retention, though it is 25.
	store.back.Store(int64(3 * time.Hour))
	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, sent, s.hits.Load(), "no resend of a key whose age the store's clock can no longer tell")

	// A new intent is charged as usual: its key is new whatever the clock.
	_, err = c.Charge(context.Background(), order("q"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "sent (and its answer dropped)")
	assert.Greater(t, s.hits.Load(), sent)
}
