package idempay_test

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: a refund is sent once under its own key, durable before its first
// byte, and its amount is entered in the intent's ledger; the same refund
// again answers from the store.
func TestRefundSucceedsOnceAndAnswersFromStore(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)

	op, err := c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.OpRefund, op.Type)
	assert.Equal(t, "rf-1", op.OpID)
	assert.Equal(t, "o", op.IntentID)
	assert.Equal(t, idempay.StateSucceeded, op.State)
	assert.Equal(t, int64(500), op.Amount)
	assert.NotEmpty(t, op.ID)
	assert.Equal(t, 1, op.Requests)

	again, err := c.Refund(context.Background(), refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, op.ID, again.ID)
	assert.Equal(t, 1, s.Ops().Count("rf-1"))

	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), l.Amount)
	assert.Equal(t, int64(500), l.Refunded)
	assert.Equal(t, int64(1000), l.Refundable)
	require.Len(t, l.Ops, 1)
	assert.Equal(t, idempay.StateSucceeded, l.Ops[0].State)
	require.NoError(t, s.Ops().Check())
}
