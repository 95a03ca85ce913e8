package stripe_test

import (
	"context"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fakestripe"
	"github.com/idempay/idempay/internal/faults"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lookup settles the current attempt only, never with an earlier one's
// PaymentIntent. Here card A is declined (PaymentIntent 1, tagged with the
// intent, searchable) and card B's answer is lost after Stripe charged it
// (PaymentIntent 2, not searchable yet: search lags writes). Search then
// finds only PaymentIntent 1, the decline of the adapter's own confirm:
// taking it for attempt 2 would record as failed a charge that moved
// money, and the next card would be charged a second time.
func TestLookupNeverSettlesAnAttemptWithAnEarlierOnesPaymentIntent(t *testing.T) {
	clock := faults.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	srv, c, _ := setup(t, fakestripe.Config{Now: clock.Now, SearchDelay: time.Minute},
		func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	ctx := context.Background()
	_, err := c.Charge(ctx, order("o", "pm_card_chargeDeclined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	clock.Advance(2 * time.Minute) // PaymentIntent 1 is searchable

	srv.InjectIntent("o", faults.Post) // Stripe charges card B; the answer is lost
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
