package idempay_test

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 17, 7): a refund ID names one refund of one intent. Used
// again for another intent it is refused, nothing sent, and never answered
// as that intent's success.
func TestRefundIDOfAnotherIntentIsRefused(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "a", 1500, false)
	charged(t, c, "b", 1500, false)
	_, err := c.Refund(context.Background(), refundOf("a", "rf-1", 500))
	require.NoError(t, err)

	op, err := c.Refund(context.Background(), refundOf("b", "rf-1", 500))
	require.Error(t, err, "answered %+v", op)
	assert.Nil(t, op)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.ErrorIs(t, err, idempay.ErrOpOfOtherIntent)
	assert.Equal(t, 1, s.Ops().Count("rf-1"))
	assert.Zero(t, s.Ops().Refunded("b"))

	again, err := c.Refund(context.Background(), refundOf("a", "rf-1", 500))
	require.NoError(t, err, "the refund still answers for its own intent")
	assert.Equal(t, "a", again.IntentID)
}
