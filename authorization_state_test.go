package idempay_test

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 17, 11): an authorisation says one thing everywhere: pending
// (State, OutcomeOf, ErrAuthorized) until it is captured, succeeded once
// it is.
func TestAuthorisationIsPendingInStateAndOutcome(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	req := order("o")
	req.Extra = map[string]string{"capture": "false"}
	for i := range 2 { // fresh, then from the store
		ch, err := c.Charge(context.Background(), req)
		require.ErrorIs(t, err, idempay.ErrAuthorized)
		require.NotNil(t, ch)
		assert.True(t, ch.Authorized)
		assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
		assert.Equal(t, idempay.StatePending, ch.State, "call %d: State agrees with OutcomeOf", i)
		ch, err = c.Settle(context.Background(), "o")
		require.ErrorIs(t, err, idempay.ErrAuthorized)
		assert.Equal(t, idempay.StatePending, ch.State, "Settle agrees")
	}
	_, err := c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.NoError(t, err)
	ch, err := c.Charge(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, idempay.OutcomeSucceeded, idempay.OutcomeOf(err))
}
