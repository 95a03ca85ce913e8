package idempay_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/clients"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
)

// Rule: a refund of an intent the store holds nothing of (no record, no
// ledger) is refused as "the charge never succeeded" only if the provider
// cannot show the charge either. A store that lost its data set (a Redis
// restarted without persistence, simulator seed 13 with -sim.redisloss)
// holds nothing of a paid intent; refused with ErrChargeNotSucceeded, the
// caller would tell the customer there was nothing to refund. The refund
// is then unknown (the lost store may have held an earlier refund), and the
// error says the store lost the charge.
func TestRefundOfAChargeTheStoreLostIsNotRefusedAsNeverCharged(t *testing.T) {
	srv := stripetest.NewServer()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	paid := clients.Stripe(t, srv)
	_, err := paid.Charge(ctx, idempay.ChargeRequest{IntentID: "lost-1", Amount: 1500, Currency: "USD", Source: "pm_card_visa"})
	require.NoError(t, err)

	// The same account, a store that lost everything.
	c := clients.Stripe(t, srv, func(cfg *idempay.Config) { cfg.Store = memstore.New() })
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "rf-1", IntentID: "lost-1", Amount: 500, Currency: "USD"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, idempay.ErrChargeNotSucceeded, "the provider shows the charge: %v", err)
	assert.ErrorIs(t, err, idempay.ErrStore)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Contains(t, err.Error(), "lost-1")

	// An intent the provider does not know either is still refused.
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "rf-2", IntentID: "never", Amount: 500, Currency: "USD"})
	assert.ErrorIs(t, err, idempay.ErrChargeNotSucceeded)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
}

// Rule: when the provider cannot be asked, a refund of an intent the store
// holds nothing of is unknown, not refused as never charged.
func TestRefundOfAnUnknownIntentWhileTheLookupFailsIsUnknown(t *testing.T) {
	srv := stripetest.NewServer()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	paid := clients.Stripe(t, srv)
	_, err := paid.Charge(ctx, idempay.ChargeRequest{IntentID: "lost-2", Amount: 1500, Currency: "USD", Source: "pm_card_visa"})
	require.NoError(t, err)
	srv.Close() // the provider is out of reach

	c := clients.Stripe(t, srv, func(cfg *idempay.Config) { cfg.Store = memstore.New() })
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "rf-1", IntentID: "lost-2", Amount: 500, Currency: "USD"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, idempay.ErrChargeNotSucceeded, "nothing proves it: %v", err)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
}
