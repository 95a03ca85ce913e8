package idempay_test

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 17, 10): a caller's key belongs to the first intent charged
// with it. Another intent charged with it is refused here, failed with
// nothing sent, and stays chargeable.
func TestCallerKeyOfAnotherIntentIsRefusedLocally(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	a := order("a")
	a.Key = "frontend-key-1"
	_, err := c.Charge(context.Background(), a)
	require.NoError(t, err)
	sent := s.Stats().Requests

	b := order("b")
	b.Key = a.Key
	_, err = c.Charge(context.Background(), b)
	require.Error(t, err)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, sent, s.Stats().Requests, "nothing sent")

	_, err = c.Charge(context.Background(), b)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "refused again: %v", err)
	b.Key = ""
	_, err = c.Charge(context.Background(), b)
	require.NoError(t, err, "b stays chargeable under another key")
	_, err = c.Charge(context.Background(), a)
	require.NoError(t, err, "a still answers with its key")
	require.NoError(t, s.Ledger().Check())
}

// Rule (issue 17, 10): a caller's key of a refund is the key of that
// refund only: not of a charge, nor of another intent's refund.
func TestCallerKeyOfAChargeIsNotARefundsKey(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	a := order("a")
	a.Key = "frontend-key-2"
	_, err := c.Charge(context.Background(), a)
	require.NoError(t, err)
	charged(t, c, "b", 1500, false)

	r := refundOf("b", "rf-1", 500)
	r.Key = a.Key
	_, err = c.Refund(context.Background(), r)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)
	assert.Zero(t, s.Ops().Count("rf-1"))
	r.Key = "refund-key-1"
	_, err = c.Refund(context.Background(), r)
	require.NoError(t, err)
	r2 := refundOf("a", "rf-2", 500)
	r2.Key = r.Key
	_, err = c.Refund(context.Background(), r2)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "%v", err)
	assert.Zero(t, s.Ops().Count("rf-2"))
}
