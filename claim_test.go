package idempay_test

import (
	"context"
	"sync"
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
		Namespace: "ns", ID: "o", Attempt: 1, Key: "k1", Fingerprint: "fp"})
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

// resolutions records every Resolution its store is asked to write.
type resolutions struct {
	idempay.KeyStore
	mu  sync.Mutex
	got []idempay.Resolution
}

func (r *resolutions) Resolve(ctx context.Context, res idempay.Resolution) error {
	r.mu.Lock()
	r.got = append(r.got, res)
	r.mu.Unlock()
	return r.KeyStore.Resolve(ctx, res)
}

func (r *resolutions) last(t *testing.T) idempay.Resolution {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.got)
	return r.got[len(r.got)-1]
}

// Rule: whether a write through a Claim is durable follows from the state
// it writes (ARCHITECTURE.md's durability table), so that no caller can
// forget it: a failed close always (its loss reopens a key perhaps never
// sent, which a resume would send for the first time); a succeeded or
// pending close only under ClaimConfig.Durable (lost, the provider replays
// it); a release that stores a result under Durable (the guard's lock); a
// bare release never.
func TestClaimDurabilityFollowsTheState(t *testing.T) {
	ctx := context.Background()
	type write func(*idempay.Claim) error
	closeAs := func(st idempay.State) write {
		return func(cl *idempay.Claim) error { return cl.Close(ctx, st, "ref", []byte(`{}`)) }
	}
	for _, tc := range []struct {
		name    string
		durable bool // ClaimConfig.Durable
		w       write
		want    bool
	}{
		{"failed close", false, closeAs(idempay.StateFailed), true},
		{"failed close if held", false, func(cl *idempay.Claim) error { return cl.CloseIfHeld(ctx, idempay.StateFailed, []byte(`{}`)) }, true},
		{"succeeded close", false, closeAs(idempay.StateSucceeded), false},
		{"pending close", false, closeAs(idempay.StatePending), false},
		{"succeeded close, Durable", true, closeAs(idempay.StateSucceeded), true},
		{"pending close, Durable", true, closeAs(idempay.StatePending), true},
		{"release with a result, Durable", true, func(cl *idempay.Claim) error { return cl.ReleaseWith(ctx, []byte(`{"lock":1}`)) }, true},
		{"release with a result", false, func(cl *idempay.Claim) error { return cl.ReleaseWith(ctx, []byte(`{"lock":1}`)) }, false},
		{"bare release, Durable", true, func(cl *idempay.Claim) error { return cl.Release(ctx) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &resolutions{KeyStore: memstore.New()}
			cfg := idempay.ClaimConfig{Store: store, Lease: time.Minute, Durable: tc.durable}
			cl, res, err := cfg.Reserve(ctx, idempay.ReserveRequest{
				Namespace: "ns", ID: "o", Attempt: 1, Key: "k1", Fingerprint: "fp"})
			require.NoError(t, err)
			require.True(t, res.Claimed)
			require.NoError(t, tc.w(cl))
			got := store.last(t)
			assert.Equal(t, tc.want, got.Durable, "Resolution.Durable of %s", tc.name)
			if got.State.Closed() || got.State == idempay.StatePending {
				assert.Equal(t, tc.want, cfg.DurableFor(got.State), "DurableFor says the same")
			}
		})
	}
}
