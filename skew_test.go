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
