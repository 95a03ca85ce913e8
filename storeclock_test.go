package idempay_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: a store clock step back that one member of the fleet saw holds for
// every member, and after any restart: a Client that first reads the store
// after the step (a new instance, a restarted one) never takes the stepped
// clock's age of an older key as proof that the key is young.
func TestStoreClockStepBackSeenByOneClientHoldsForEveryClient(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	store := &steppedBack{KeyStore: memstore.New(memstore.WithClock(clock))}
	s := newStub(t, store, drop, drop, drop, drop, drop, drop)
	onClock := func(cfg *idempay.Config) { cfg.Clock = clock }
	seer := newClient(t, s.server.URL, store, onClock)
	ctx := context.Background()
	_, err := seer.Charge(ctx, order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	// An hour on, the store's clock steps back two hours; the running
	// Client sees it on its next charge.
	storeNow.Add(int64(time.Hour))
	store.back.Store(int64(2 * time.Hour))
	_, _ = seer.Charge(ctx, order("p"))

	// 23 h 30 min after o's key was sent (past the 23-hour retention), the
	// stepped clock reads its age as 21 h 30 min. A Client that never saw
	// the store before the step must not resend it.
	storeNow.Add(int64(22*time.Hour + 30*time.Minute))
	sent := s.hits.Load()
	fresh := newClient(t, s.server.URL, store, onClock)
	_, err = fresh.Charge(ctx, order("o"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, sent, s.hits.Load(), "no resend of a key whose age the stepped clock cannot tell")
}

// factsUnreadable is a store that cannot list its clock facts.
type factsUnreadable struct{ idempay.KeyStore }

func (s factsUnreadable) ListOpen(ctx context.Context, ns string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	if strings.HasSuffix(ns, "/clock") {
		return nil, errors.New("listing refused")
	}
	return s.KeyStore.ListOpen(ctx, ns, after, limit)
}

// Rule: a key whose age the fleet's clock facts cannot vouch for (the
// store cannot list them) is never resent: its outcome stays unknown.
func TestStoreClockFactsUnreadableNeverResends(t *testing.T) {
	var storeNow atomic.Int64
	storeNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, storeNow.Load()) }
	mem := memstore.New(memstore.WithClock(clock))
	s := newStub(t, mem, drop, drop, drop, drop, drop)
	onClock := func(cfg *idempay.Config) { cfg.Clock = clock }
	_, err := newClient(t, s.server.URL, mem, onClock).Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	storeNow.Add(int64(time.Hour))
	sent := s.hits.Load()
	_, err = newClient(t, s.server.URL, factsUnreadable{mem}, onClock).Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, sent, s.hits.Load(), "no resend on an age nobody can vouch for")
}
