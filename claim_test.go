package idempay_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// Rule: a lease whose time ran out on the holder's clock counts as lapsed
// at once, before the heartbeat has noticed (after a pause it may not have
// run yet): CloseIfHeld then records nothing, since another flight may
// have sent meanwhile. Found by the simulator: whether a flight paused past
// its lease tried to close as failed depended on when the heartbeat's
// goroutine had last run.
func TestLeaseRunOutOnTheClockIsLapsed(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	store := memstore.New(memstore.WithClock(clock))
	cfg := idempay.ClaimConfig{Store: store, Lease: time.Minute, Clock: clock}
	claim, res, err := cfg.Reserve(context.Background(), idempay.ReserveRequest{
		Namespace: "ns", IntentID: "o", Attempt: 1, Key: "k1", Fingerprint: "fp"})
	require.NoError(t, err)
	require.True(t, res.Claimed)
	assert.False(t, claim.Lapsed())

	now.Add(int64(2 * time.Minute)) // a pause: no heartbeat ran
	assert.True(t, claim.Lapsed(), "the lease ran out on the holder's clock")
	assert.False(t, claim.Held())
	assert.ErrorIs(t, claim.CloseIfHeld(context.Background(), idempay.StateFailed, nil), idempay.ErrLeaseLost)
	rec, err := store.Load(context.Background(), "ns", "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateOpen, rec.State, "nothing recorded")
}
