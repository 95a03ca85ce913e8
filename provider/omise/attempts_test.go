package omise_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 9: a customer declined on an order tries another card on the same
// intent. The decline is attempt 1; the other card begins attempt 2, with
// a new key, durable before it is sent: two attempts, two keys, one
// charge. (The fake checks every request's key is in the store first.)
func TestDeclineThenAnotherCardIsASecondAttempt(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	_, err := f.client.Charge(ctx, thb("o", "tokn_test_decline"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))

	ch, err := f.client.Charge(ctx, thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, 1, ch.Requests)
	keys := f.srv.Stats().Keys["o"]
	require.Len(t, keys, 2, "two attempts, two keys")
	assert.Equal(t, ch.Key, keys[1])
	assert.Equal(t, 2, f.srv.Stats().Requests)
	assert.Equal(t, 1, f.srv.Ledger().Count("o"), "one charge")

	rec, err := f.client.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, 2, rec.Attempt)
	assert.Equal(t, ch.ID, rec.ProviderRef)
	require.Len(t, rec.History, 1)
	assert.Equal(t, idempay.StateFailed, rec.History[0].State)
	assert.Equal(t, keys[0], rec.History[0].Key)
}

// Issue 9: once an intent is paid, a charge of it with other parameters
// (another card, another amount, a double-click with a new frontend key)
// is answered by that success from the store, with no request to Omise:
// no charge, no lookup.
func TestPaidIntentAnswersEveryLaterChargeWithItsSuccess(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	paid, err := f.client.Charge(ctx, thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	before := f.srv.Stats()

	otherAmount := thb("o", "tokn_test_visa")
	otherAmount.Amount = 250000
	newKey := thb("o", "tokn_test_visa")
	newKey.Key = "frontend-key-after-paid"
	for name, tc := range map[string]struct {
		req    idempay.ChargeRequest
		differ bool
	}{
		"another card":      {thb("o", "tokn_test_other"), true},
		"a declining card":  {thb("o", "tokn_test_decline"), true},
		"an offsite source": {thb("o", "src_test_promptpay"), true},
		"another amount":    {otherAmount, true},
		"a new caller key":  {newKey, false}, // the key is no parameter
		"the same request":  {thb("o", "tokn_test_visa"), false},
	} {
		ch, err := f.client.Charge(ctx, tc.req)
		require.NoError(t, err, name)
		assert.Equal(t, paid.ID, ch.ID, name)
		assert.Equal(t, idempay.StateSucceeded, ch.State, name)
		assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom, name)
		assert.Equal(t, tc.differ, ch.ParamsDiffer, name)
		assert.Zero(t, ch.Requests, name)
	}
	after := f.srv.Stats()
	assert.Equal(t, before.Requests, after.Requests, "no charge request")
	assert.Equal(t, before.Lists, after.Lists, "no lookup")
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}

// The guard's lookup settles the current attempt only, never with an
// earlier one's charge. Card A is declined (charge 1, tagged with the
// intent, failed); card B's request is lost before Omise acts. The lookup
// before the resend must prove that attempt 2 made no charge, and send
// card B again: charge 1 is not attempt 2's, and reading its decline as
// card B's would refuse a customer whose card was never tried.
func TestGuardLookupIgnoresAnEarlierAttemptsCharge(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	_, err := f.client.Charge(ctx, thb("o", "tokn_test_decline"))
	require.ErrorIs(t, err, idempay.ErrDeclined)

	f.srv.Fail("o", fakes.Pre) // card B never reaches Omise the first time
	ch, err := f.client.Charge(ctx, thb("o", "tokn_test_visa"))
	require.NoError(t, err, "attempt 1's decline is not card B's outcome")
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, 2, ch.Requests, "resent after the lookup proved no charge of attempt 2")
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}

// On a busy account a lookup reads the window oldest first once the
// newest page is not all of it, and meets the earlier attempt's charge
// before the current one's. Card A is declined (charge 1); card B is
// charged and its answer lost while lookups fail, so attempt 2 is unknown;
// 150 charges follow. Settling must find charge 2, never take charge 1's
// decline for attempt 2 (which would record as failed a charge that moved
// money, and let a third card be charged too).
func TestLookupNeverSettlesAnAttemptWithAnEarlierOnesCharge(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	f := setupOnClock(t, nil, clock.Now)
	ctx := context.Background()
	_, err := f.client.Charge(ctx, thb("o", "tokn_test_decline"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	clock.Advance(10 * time.Second)

	require.NoError(t, f.srv.SetLookupFailures(1))
	f.srv.Fail("o", fakes.Post) // Omise charges card B; the answer is lost
	_, err = f.client.Charge(ctx, thb("o", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	require.Equal(t, 1, f.srv.Ledger().Count("o"), "card B was charged")
	require.NoError(t, f.srv.SetLookupFailures(0))

	for i := range 150 {
		clock.Advance(time.Millisecond)
		_, err := f.client.Charge(ctx, thb(fmt.Sprintf("busy-%03d", i), fmt.Sprintf("tokn_test_busy_%03d", i)))
		require.NoError(t, err)
	}

	ch, err := f.client.Settle(ctx, "o")
	require.NoError(t, err, "attempt 1's decline is not attempt 2's outcome")
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 2, ch.Attempt)

	sent := f.srv.Stats().Requests
	again, err := f.client.Charge(ctx, thb("o", "tokn_test_third"))
	require.NoError(t, err)
	assert.Equal(t, ch.ID, again.ID, "the paid intent answers a third card with its success")
	assert.Equal(t, sent, f.srv.Stats().Requests)
	assert.Equal(t, 1, f.srv.Ledger().Count("o"), "one charge")
}
