package omise_test

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

// Issue 9 (done when): the tour's code, run against pending Omise answers
// (a 3-D Secure charge, an offsite source), fresh, found by the guard's
// lookup after a lost answer, answered from the store and looked up again,
// never ships an order that is not paid, and always has the page to send
// the customer to. Once the customer passes 3-D Secure the same code ships
// it, once; a rejected 3-D Secure is never shipped.
func TestTourNeverShipsAPendingOmiseCharge(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	withReturn := func(id, src string) idempay.ChargeRequest {
		r := thb(id, src)
		r.ReturnURL = "https://shop.example/orders/" + id + "/back"
		return r
	}
	orders := map[string]idempay.ChargeRequest{
		"3ds":         withReturn("3ds", "tokn_test_3ds"),
		"3ds-lost":    withReturn("3ds-lost", "tokn_test_3ds_lost"),
		"3ds-refused": withReturn("3ds-refused", "tokn_test_3ds_refused"),
		"promptpay":   thb("promptpay", "src_test_promptpay"),
	}
	f.srv.Fail("3ds-lost", fakes.Post) // Omise makes the charge, the answer is lost: the guard finds it

	var s tourShop
	for range 3 { // fresh or found by lookup, then from the store after a lookup, then again
		for _, req := range orders {
			s.checkout(ctx, f.client, req)
		}
	}
	assert.Empty(t, s.shipped, "a pending charge is never shipped")
	assert.Empty(t, s.refused)
	assert.Empty(t, s.later)
	require.Len(t, s.redirected, len(orders), "every customer is sent to finish paying")
	for id, page := range s.redirected {
		assert.NotEmpty(t, page, "%s: the page the customer pays on", id)
		assert.Zero(t, f.srv.Ledger().Count(id), id)
	}
	assert.Equal(t, len(orders), f.srv.Stats().Requests, "one charge request per order")

	// The customers finish: one passes 3-D Secure, one is rejected.
	pass, refuse := chargeIDOf(t, f.client, "3ds"), chargeIDOf(t, f.client, "3ds-refused")
	require.True(t, f.srv.Complete(pass, true))
	require.True(t, f.srv.Complete(refuse, false))
	s = tourShop{}
	for range 2 {
		s.checkout(ctx, f.client, orders["3ds"])
		s.checkout(ctx, f.client, orders["3ds-refused"])
	}
	assert.Equal(t, []string{"3ds", "3ds"}, s.shipped, "paid now: shipped (from the lookup, then from the store)")
	assert.Equal(t, []string{"3ds-refused", "3ds-refused"}, s.refused, "a rejected 3-D Secure is never shipped")
	assert.Equal(t, 1, f.srv.Ledger().Count("3ds"))
	assert.Zero(t, f.srv.Ledger().Count("3ds-refused"))
}

// chargeIDOf is the provider's charge ID recorded for an intent.
func chargeIDOf(t *testing.T, c *idempay.Client, intentID string) string {
	t.Helper()
	rec, err := c.Record(context.Background(), intentID)
	require.NoError(t, err)
	require.NotEmpty(t, rec.ProviderRef, intentID)
	return rec.ProviderRef
}
