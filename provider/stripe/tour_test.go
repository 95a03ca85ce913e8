package stripe_test

import (
	"context"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tourShop is the caller of the README's API tour: it charges an order and
// switches on idempay.OutcomeOf(err) alone, over the four outcomes, the way
// the tour shows. It reads nothing else to decide (not ch.State, not the
// error's type): a caller who follows the tour must be right by the
// outcome alone.
type tourShop struct {
	shipped    []string          // orders handed to the warehouse: paid
	redirected map[string]string // orders whose customer was sent to pay, and where
	refused    []string          // orders whose customer was asked for another card
	later      []string          // orders kept open, to charge again later
}

func (s *tourShop) checkout(ctx context.Context, client idempay.Charger, req idempay.ChargeRequest) {
	ch, err := client.Charge(ctx, req)
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded: // paid: ship it
		s.shipped = append(s.shipped, req.IntentID)
	case idempay.OutcomePending: // not paid yet: send the customer where the provider says
		if s.redirected == nil {
			s.redirected = map[string]string{}
		}
		s.redirected[req.IntentID] = ch.AuthorizeURL
	case idempay.OutcomeFailed: // no money moved: ask for another card
		s.refused = append(s.refused, req.IntentID)
	case idempay.OutcomeUnknown: // money may have moved: keep the order open, charge it again later
		s.later = append(s.later, req.IntentID)
	}
}

// Issue 9 (done when): the tour's code, run against pending Stripe answers
// (3-D Secure's requires_action, processing, an unconfirmed intent waiting
// for its payment method), fresh, replayed by Stripe after a lost answer,
// answered from the store and looked up again, never ships an order that
// is not paid. Once the customer passes 3-D Secure the same code ships it,
// once; a failed 3-D Secure is never shipped.
func TestTourNeverShipsAPendingStripeCharge(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	withReturn := func(id, pm string) idempay.ChargeRequest {
		r := order(id, pm)
		r.ReturnURL = "https://shop.example/orders/" + id + "/back"
		return r
	}
	orders := map[string]idempay.ChargeRequest{
		"3ds":         withReturn("3ds", "pm_card_threeDSecure2Required"),
		"3ds-lost":    withReturn("3ds-lost", "pm_card_threeDSecure2Required"),
		"3ds-refused": withReturn("3ds-refused", "pm_card_threeDSecure2Required"),
		"processing":  order("processing", "pm_card_processing"),
		"unconfirmed": order("unconfirmed", ""),
	}
	srv.Fail("3ds-lost", fakes.Post) // Stripe answers, the answer is lost; the retry is a replay

	var s tourShop
	for range 3 { // fresh or replayed, then from the store after a lookup, then again
		for _, req := range orders {
			s.checkout(ctx, c, req)
		}
	}
	assert.Empty(t, s.shipped, "a pending charge is never shipped")
	assert.Empty(t, s.refused)
	assert.Empty(t, s.later)
	assert.Len(t, s.redirected, len(orders), "every customer is sent to finish paying")
	for _, id := range []string{"3ds", "3ds-lost", "3ds-refused"} {
		assert.NotEmpty(t, s.redirected[id], "%s: the 3-D Secure page", id)
	}
	for id := range orders {
		assert.Zero(t, srv.Ledger().Count(id), id)
	}

	// The customers finish: one passes, one fails 3-D Secure.
	pass, refuse := mustChargeID(t, c, "3ds"), mustChargeID(t, c, "3ds-refused")
	require.True(t, srv.Complete(pass, true))
	require.True(t, srv.Complete(refuse, false))
	s = tourShop{}
	for range 2 {
		s.checkout(ctx, c, orders["3ds"])
		s.checkout(ctx, c, orders["3ds-refused"])
	}
	assert.Equal(t, []string{"3ds", "3ds"}, s.shipped, "paid now: shipped (from the lookup, then from the store)")
	assert.Equal(t, []string{"3ds-refused", "3ds-refused"}, s.refused, "a failed 3-D Secure is never shipped")
	assert.Equal(t, 1, srv.Ledger().Count("3ds"))
	assert.Zero(t, srv.Ledger().Count("3ds-refused"))
}

// mustChargeID is the provider's charge ID recorded for an intent.
func mustChargeID(t *testing.T, c *idempay.Client, intentID string) string {
	t.Helper()
	rec, err := c.Record(context.Background(), intentID)
	require.NoError(t, err)
	require.NotEmpty(t, rec.ProviderRef, intentID)
	return rec.ProviderRef
}
