package stripe_test

import (
	"context"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 9: a customer declined on an order tries another card on the same
// intent. The decline is attempt 1; the other card begins attempt 2, with
// a new key, durable before it is sent: two attempts, two keys, one
// charge. (The fake checks every request's key is in the store first.)
func TestDeclineThenAnotherCardIsASecondAttempt(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	_, err := c.Charge(ctx, order("o", "pm_card_chargeDeclined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))

	ch, err := c.Charge(ctx, order("o", "pm_card_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, 1, ch.Requests)
	keys := srv.Stats().Keys["o"]
	require.Len(t, keys, 2, "two attempts, two keys")
	assert.Equal(t, ch.Key, keys[1])
	assert.Equal(t, 2, srv.Stats().Requests)
	assert.Equal(t, 1, srv.Ledger().Count("o"), "one charge")

	rec, err := c.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, 2, rec.Attempt)
	assert.Equal(t, ch.ID, rec.ProviderRef)
	require.Len(t, rec.History, 1)
	assert.Equal(t, idempay.StateFailed, rec.History[0].State)
	assert.Equal(t, keys[0], rec.History[0].Key)
	assert.NotEqual(t, rec.History[0].Fingerprint, rec.Fingerprint)
}

// Issue 9: once an intent is paid, a charge of it with other parameters
// (another card, another amount, a double-click with a new frontend key)
// is answered by that success from the store, with no request to Stripe.
func TestPaidIntentAnswersEveryLaterChargeWithItsSuccess(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	paid, err := c.Charge(ctx, order("o", "pm_card_visa"))
	require.NoError(t, err)
	before := srv.Stats()

	otherAmount := order("o", "pm_card_visa")
	otherAmount.Amount = 2500
	newKey := order("o", "pm_card_visa")
	newKey.Key = "frontend-key-after-paid"
	for name, tc := range map[string]struct {
		req    idempay.ChargeRequest
		differ bool
	}{
		"another card":      {order("o", "pm_card_mastercard"), true},
		"a declining card":  {order("o", "pm_card_chargeDeclined"), true},
		"another amount":    {otherAmount, true},
		"a new caller key":  {newKey, false}, // the key is no parameter
		"the same request":  {order("o", "pm_card_visa"), false},
		"a 3-D Secure card": {order("o", "pm_card_threeDSecure2Required"), true},
	} {
		ch, err := c.Charge(ctx, tc.req)
		require.NoError(t, err, name)
		assert.Equal(t, paid.ID, ch.ID, name)
		assert.Equal(t, idempay.StateSucceeded, ch.State, name)
		assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom, name)
		assert.Equal(t, tc.differ, ch.ParamsDiffer, name)
		assert.Zero(t, ch.Requests, name)
	}
	after := srv.Stats()
	assert.Equal(t, before.Requests, after.Requests, "no charge request")
	assert.Equal(t, before.Searches, after.Searches, "no search")
	assert.Equal(t, before.Retrievals, after.Retrievals, "no retrieve")
	assert.Equal(t, 1, srv.Ledger().Count("o"))
}

// A lookup settles the current attempt only, never with an earlier one's
// PaymentIntent. Here card A is declined (PaymentIntent 1, tagged with the
// intent, searchable) and card B's answer is lost after Stripe charged it
// (PaymentIntent 2, not searchable yet: search lags writes). Search then
// finds only PaymentIntent 1, the decline of the adapter's own confirm:
// taking it for attempt 2 would record as failed a charge that moved
// money, and the next card would be charged a second time.
func TestLookupNeverSettlesAnAttemptWithAnEarlierOnesPaymentIntent(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	srv, c, _ := setup(t, []stripetest.Option{stripetest.WithSettings(fakes.Settings{Clock: clock.Now}), stripetest.WithSearchDelay(time.Minute)},
		func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	ctx := context.Background()
	_, err := c.Charge(ctx, order("o", "pm_card_chargeDeclined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	clock.Advance(2 * time.Minute) // PaymentIntent 1 is searchable

	srv.Fail("o", fakes.Post) // Stripe charges card B; the answer is lost
	_, err = c.Charge(ctx, order("o", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	require.Equal(t, 1, srv.Ledger().Count("o"), "card B was charged")

	_, err = c.Settle(ctx, "o")
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "attempt 1's decline is not attempt 2's outcome")
	assert.ErrorIs(t, err, stripe.ErrNotIndexed)
	rec, lerr := c.Record(ctx, "o")
	require.NoError(t, lerr)
	assert.Equal(t, idempay.StateOpen, rec.State)
	assert.Equal(t, 2, rec.Attempt)

	// While attempt 2 may have moved money, no third card is sent.
	sent := srv.Stats().Requests
	_, err = c.Charge(ctx, order("o", "pm_card_mastercard"))
	assert.ErrorIs(t, err, idempay.ErrAttemptOpen)
	assert.Equal(t, sent, srv.Stats().Requests)

	clock.Advance(2 * time.Minute) // PaymentIntent 2 is searchable
	ch, err := c.Settle(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, 1, srv.Ledger().Count("o"), "one charge")
}
