package idempay_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: a pending refund is its own outcome: the *Operation comes with an
// error matching ErrPending, the record stays pending, and the next call
// settles it by lookup, never by resending.
func TestPendingRefundIsSettledByLookup(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	s.answer("rf-p", opAnswer(202, "re_p", "pending", 500))
	op, err := c.Refund(ctx, refundOf("o", "rf-p", 500))
	require.ErrorIs(t, err, idempay.ErrPending)
	opErr(t, err, idempay.OutcomePending)
	require.NotNil(t, op, "a pending refund comes with what the provider said")
	assert.Equal(t, idempay.StatePending, op.State)
	assert.Equal(t, "re_p", op.ID)
	rec, err := recordOf(t, store, idempay.OpRefund, "rf-p")
	require.NoError(t, err)
	assert.Equal(t, idempay.StatePending, rec.State)
	assert.Equal(t, "re_p", rec.ProviderRef)

	s.answer("rf-p", opAnswer(200, "re_p", "succeeded", 500)) // the lookup's answer
	op, err = c.Refund(ctx, refundOf("o", "rf-p", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, 2, s.requests("rf-p"), "one POST, one lookup")
	l, err := c.Ledger(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, int64(500), l.Refunded)
	assert.Zero(t, l.RefundsInFlight)
}

// Rule: an unknown refund is settled by the next call with the same
// request: the same key is resent and the server replays what it did.
func TestUnknownRefundResumesWithItsKey(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	s.InjectOrder("rf-1", refserver.Post, refserver.Post) // refunded, both answers lost
	op, err := c.Refund(ctx, refundOf("o", "rf-1", 700))
	require.Nil(t, op)
	oe := opErr(t, err, idempay.OutcomeUnknown)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 2, oe.Requests)
	var open []idempay.Record
	for rec, err := range c.UnresolvedOps(ctx, idempay.OpRefund) {
		require.NoError(t, err)
		open = append(open, rec)
	}
	require.Len(t, open, 1)

	op, err = c.Refund(ctx, refundOf("o", "rf-1", 700))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, open[0].Key, op.Key)
	assert.Equal(t, []string{op.Key}, s.Stats().Ops.KeysByID["rf-1"], "one key over every attempt")
	assert.Equal(t, 1, s.Ops().Count("rf-1"))
}

// Rule: a refund whose key is older than KeyRetention is never resent: it
// is settled by lookup.
func TestExpiredRefundIsSettledByLookup(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	// The store's clock moves by hand: memstore alone takes one.
	store := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
	charged(t, c, "o", 1500, false)
	s.InjectOrder("rf-old", refserver.Post, refserver.Post)
	_, err := c.Refund(context.Background(), refundOf("o", "rf-old", 700))
	opErr(t, err, idempay.OutcomeUnknown)
	posts := s.Stats().Ops.Requests

	now.Add(int64(48 * time.Hour))
	op, err := c.Refund(context.Background(), refundOf("o", "rf-old", 700))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, posts, s.Stats().Ops.Requests, "never resent")
	assert.Equal(t, 1, s.Stats().Ops.Lookups)
	assert.Equal(t, 1, s.Ops().Count("rf-old"))
}

// Rule: a provider that does not de-duplicate (LookupBeforeResender) is asked
// before every resend of a refund too.
func TestLookupBeforeResendCoversRefunds(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) {
		cfg.Provider = guardedOwnAPI{idempay.OwnAPI{LookupPath: refserver.DefaultPath, OpLookup: true}}
	})
	charged(t, c, "o", 1500, false)
	s.InjectOrder("rf-g", refserver.Post)
	op, err := c.Refund(context.Background(), refundOf("o", "rf-g", 300))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	st := s.Stats().Ops
	assert.Equal(t, 1, st.Requests, "found by the lookup: not resent")
	assert.Equal(t, 1, st.Lookups)
}

// Rule: an answer that does not say how the refund ended is unknown,
// never failed, never succeeded; a refund the provider says it cancelled
// moved no money.
func TestHostileRefundAnswers(t *testing.T) {
	cases := map[string]struct {
		answer  step
		outcome idempay.Outcome
		err     error
	}{
		"2xx with a status word nobody knows": {opAnswer(200, "re_x", "teleported", 500), idempay.OutcomeUnknown, idempay.ErrOutcomeUnknown},
		"2xx that does not parse":             {status(201, `<html>ok</html>`), idempay.OutcomeUnknown, idempay.ErrOutcomeUnknown},
		"2xx without an id":                   {status(201, `{"status":"succeeded"}`), idempay.OutcomeUnknown, idempay.ErrOutcomeUnknown},
		"a stored 500 replayed":               {replayed("Idempotency-Replayed", status(500, `{"error":{"type":"api_error"}}`)), idempay.OutcomeUnknown, idempay.ErrStoredFailure},
		"a refund cancelled by the provider":  {opAnswer(200, "re_c", "canceled", 500), idempay.OutcomeFailed, idempay.ErrDeclined},
		"a key re-used with another body":     {status(422, `{"error":{"type":"idempotency_error"}}`), idempay.OutcomeUnknown, idempay.ErrKeyConflict},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := opsStore(t)
			s := startOps(t, store, refserver.Config{})
			c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
			charged(t, c, "o", 1500, false)
			s.answer("rf-h", tc.answer)
			op, err := c.Refund(context.Background(), refundOf("o", "rf-h", 500))
			assert.Nil(t, op)
			require.ErrorIs(t, err, tc.err)
			opErr(t, err, tc.outcome)
			l, err := c.Ledger(context.Background(), "o")
			require.NoError(t, err)
			if tc.outcome == idempay.OutcomeFailed {
				assert.Equal(t, int64(1500), l.Refundable)
			} else {
				assert.Equal(t, int64(1000), l.Refundable, "an unknown refund keeps its amount")
			}
		})
	}
}

// lyingRefunds says what a careless adapter might: succeeded without the
// refund, or pending with a state that says succeeded.
type lyingRefunds struct {
	idempay.OwnAPI
	v idempay.Verdict
}

func (p lyingRefunds) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	if t == idempay.OpRefund {
		return p.v
	}
	return p.OwnAPI.ReadOp(t, resp, body)
}

// Rule: the engine trusts the verdict's kind, not what an adapter fills
// around it: "succeeded" without the operation is unknown; "pending" is
// pending whatever State the operation carries.
func TestCarelessRefundVerdicts(t *testing.T) {
	for name, tc := range map[string]struct {
		v       idempay.Verdict
		outcome idempay.Outcome
	}{
		"succeeded without the refund": {idempay.Verdict{Kind: idempay.KindSucceeded}, idempay.OutcomeUnknown},
		"pending, said succeeded": {idempay.Verdict{Kind: idempay.KindPending,
			Operation: &idempay.Operation{ID: "re_1", State: idempay.StateSucceeded}}, idempay.OutcomePending},
	} {
		t.Run(name, func(t *testing.T) {
			store := opsStore(t)
			s := startOps(t, store, refserver.Config{})
			c := opsClient(t, s, store, func(cfg *idempay.Config) {
				cfg.Provider = lyingRefunds{OwnAPI: idempay.OwnAPI{}, v: tc.v}
				cfg.Retry.MaxAttempts = 1
			})
			charged(t, c, "o", 1500, false)
			_, err := c.Refund(context.Background(), refundOf("o", "rf-1", 500))
			opErr(t, err, tc.outcome)
			rec, err := recordOf(t, store, idempay.OpRefund, "rf-1")
			require.NoError(t, err)
			assert.False(t, rec.State.Closed(), "nothing proved: the record stays %s", rec.State)
		})
	}
}

// Rule: a refund whose key the provider stored a 500 for is unknown and not
// retried: the replay cannot change; its amount keeps counting.
func TestStoredServerErrorOnARefund(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{StoreServerErrors: true})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	s.InjectOrder("rf-500", refserver.Internal)
	_, err := c.Refund(context.Background(), refundOf("o", "rf-500", 1000))
	require.ErrorIs(t, err, idempay.ErrStoredFailure)
	opErr(t, err, idempay.OutcomeUnknown)
	assert.Equal(t, 2, s.requests("rf-500"), "the fresh 500 retried once; its replay ends it")
	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(500), l.Refundable, "unknown: its 1000 counts")
	assert.Zero(t, s.Ops().Count("rf-500"))
}

// Rule: SettleRefund settles an unsettled refund by lookup without
// resending it: a refund whose every answer was lost is found made, and
// recorded; a refund never made has nothing to settle.
func TestSettleRefundByLookup(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{StoreServerErrors: true})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)

	s.InjectOrder("rf-lost", refserver.Post, refserver.Post, refserver.Post, refserver.Post, refserver.Post, refserver.Post)
	_, err := c.Refund(context.Background(), refundOf("o", "rf-lost", 400))
	opErr(t, err, idempay.OutcomeUnknown)
	sent := s.requests("rf-lost")

	op, err := c.SettleRefund(context.Background(), refundOf("o", "rf-lost", 400))
	require.NoError(t, err, "found made by lookup")
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, sent+1, s.requests("rf-lost"), "one lookup, no resend")
	assert.Equal(t, 1, s.Ops().Count("rf-lost"))
	again, err := c.Refund(context.Background(), refundOf("o", "rf-lost", 400))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)

	_, err = c.SettleRefund(context.Background(), refundOf("o", "never-made", 100))
	assert.ErrorIs(t, err, idempay.ErrNotFound, "nothing to settle")
}
