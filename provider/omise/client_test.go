package omise_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChargeSucceeds(t *testing.T) {
	f := setup(t, nil)
	req := thb("order-1", "tokn_test_visa")
	req.Description, req.Metadata = "Order 1", map[string]string{"shop": "bangkok"}
	ch, err := f.client.Charge(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, "successful", ch.Status)
	assert.Equal(t, int64(150000), ch.Amount)
	assert.Equal(t, "THB", ch.Currency)
	assert.Equal(t, 1, ch.Requests)
	assert.False(t, ch.Replayed)

	c, ok := f.srv.Charge(ch.ID)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"idempay_intent": "order-1", "idempay_namespace": ns, "idempay_key": ch.Key, "shop": "bangkok"}, c.Metadata)
	assert.Equal(t, "Order 1", *c.Description)
	rec, _ := f.store.Load(context.Background(), f.client.Namespace(), "order-1")
	assert.Equal(t, ch.ID, rec.ProviderRef)
	assert.Equal(t, 1, f.srv.Ledger().Count("order-1"))
}

// A decline is a 200 charge with status failed: a definite failure.
func TestDeclineIsFailedCharge(t *testing.T) {
	f := setup(t, nil)
	_, err := f.client.Charge(context.Background(), thb("o", "tokn_test_decline"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusOK, apiErr.Status)
	assert.Equal(t, "insufficient_fund", apiErr.Code)
	assert.NotEmpty(t, apiErr.Message)
	assert.Equal(t, 1, f.srv.Stats().Requests)

	_, err = f.client.Charge(context.Background(), thb("o", "tokn_test_decline"))
	assert.ErrorIs(t, err, idempay.ErrDeclined, "answered from the store")
	assert.Equal(t, 1, f.srv.Stats().Requests)
}

// The answer of a charge that went through is lost: the guard finds the
// charge by listing, and nothing is resent.
func TestLostAnswerIsSettledByLookup(t *testing.T) {
	f := setup(t, nil)
	f.srv.Fail("o", fakes.Post)
	ch, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 1, f.srv.Stats().Requests, "never resent")
	assert.Equal(t, 1, f.srv.Stats().Lists)
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}

// The request was lost before Omise acted: the lookup proves no charge
// exists, and the same token is resent.
func TestLostRequestIsResentAfterProof(t *testing.T) {
	for _, fault := range []fakes.Fault{fakes.Pre, fakes.Mid, fakes.Unavailable, fakes.Internal} {
		t.Run(fault.String(), func(t *testing.T) {
			f := setup(t, nil)
			f.srv.Fail("o", fault)
			ch, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
			require.NoError(t, err)
			assert.Equal(t, 2, ch.Requests)
			assert.False(t, ch.Replayed)
			assert.Equal(t, 1, f.srv.Stats().Lists, "looked up before the resend")
			assert.Equal(t, 1, f.srv.Ledger().Count("o"))
		})
	}
}

// used_token after a lost answer: the token was consumed by the intent's
// own charge, which the list did not show yet. The token stops the second
// charge; the intent stays unknown, and is settled by lookup later, never
// by resending.
func TestUsedTokenAfterLostAnswerIsSettledByLookup(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	f := setupOnClock(t, []omisetest.Option{omisetest.WithListDelay(time.Minute)}, clock.Now)
	f.srv.Fail("o", fakes.Post)
	_, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "used_token is not proof of failure")
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "used_token", apiErr.Code)
	assert.Equal(t, 2, f.srv.Stats().Requests, "one resend, allowed by a lookup that found nothing yet")
	assert.Equal(t, 1, f.srv.Stats().Codes["used_token"])
	assert.Equal(t, 1, f.srv.Ledger().Count("o"), "the token prevented a second charge")
	rec, _ := f.store.Load(context.Background(), f.client.Namespace(), "o")
	assert.Equal(t, idempay.StateOpen, rec.State)

	clock.Advance(2 * time.Minute) // the charge is listed now
	ch, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 2, f.srv.Stats().Requests, "settled by lookup, never by resending")
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}

// A token already used by another intent's charge: nothing of this intent
// is found, and the outcome stays unknown rather than failed, since the
// token's charge could be this payment made under another record.
func TestUsedTokenOnNewKeyIsUnknown(t *testing.T) {
	f := setup(t, nil)
	_, err := f.client.Charge(context.Background(), thb("first", "tokn_test_once"))
	require.NoError(t, err)
	_, err = f.client.Charge(context.Background(), thb("second", "tokn_test_once"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 2, f.srv.Stats().Requests, "looked up, not resent")
	assert.Zero(t, f.srv.Ledger().Count("second"))
}

func TestThreeDSecureThenSettle(t *testing.T) {
	f := setup(t, nil)
	req := thb("3ds", "tokn_test_3ds")
	req.ReturnURL = "https://shop.example/orders/3ds/complete"
	ch, err := f.client.Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.Equal(t, "pending", ch.Status)
	assert.NotEmpty(t, ch.AuthorizeURL)
	rec, _ := f.store.Load(context.Background(), f.client.Namespace(), "3ds")
	assert.Equal(t, idempay.StatePending, rec.State)
	assert.Equal(t, ch.ID, rec.ProviderRef, "the charge ID is stored with the intent")

	// The customer passes 3-D Secure and comes back with the charge ID.
	require.True(t, f.srv.Complete(ch.ID, true))
	intent, err := omise.Provider{}.IntentOfCharge(context.Background(), nil, f.target, ch.ID)
	require.NoError(t, err)
	assert.Equal(t, "3ds", intent)
	done, err := f.client.Settle(context.Background(), intent)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, done.State)
	assert.Equal(t, "successful", done.Status)
	assert.Equal(t, 1, f.srv.Stats().Requests)
	assert.Equal(t, 1, f.srv.Ledger().Count("3ds"))
}

func TestThreeDSecureRejected(t *testing.T) {
	f := setup(t, nil)
	req := thb("3ds", "tokn_test_3ds")
	req.ReturnURL = "https://shop.example/back"
	ch, err := f.client.Charge(context.Background(), req)
	requirePending(t, ch, err)
	require.True(t, f.srv.Complete(ch.ID, false))
	_, err = f.client.Settle(context.Background(), "3ds")
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Zero(t, f.srv.Ledger().Count("3ds"))
}

// A charge made with capture=false is authorised, not paid: Charge answers
// it pending with ErrAuthorized (the *Charge has Authorized set), the same
// again from the store, until it is captured; then it answers succeeded
// with what was captured.
func TestAuthorisedIsPendingUntilCaptured(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	req := thb("auth", "tokn_test_visa")
	req.Extra = map[string]string{omise.ExtraCapture: "false"}
	for range 2 { // the second answer comes from the store
		ch, err := f.client.Charge(ctx, req)
		require.ErrorIs(t, err, idempay.ErrAuthorized)
		assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err), "never shipped as paid")
		require.NotNil(t, ch)
		assert.True(t, ch.Authorized)
		assert.Equal(t, omise.StatusAuthorized, ch.Status)
	}
	assert.Equal(t, 1, f.srv.Stats().Requests)

	_, err := f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "auth-cp", IntentID: "auth", Amount: 100000, Currency: "THB"})
	require.NoError(t, err)
	ch, err := f.client.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, int64(100000), ch.Captured)
}

func TestSourceIsPendingOffsite(t *testing.T) {
	f := setup(t, nil)
	req := thb("qr", "src_test_promptpay")
	ch, err := f.client.Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.NotEmpty(t, ch.AuthorizeURL, "the offsite page the customer pays on")
	c, _ := f.srv.Charge(ch.ID)
	assert.Nil(t, c.Customer)
}

// An intent still unknown past the retention window is settled by
// listing, and its key is never sent again.
func TestExpiredIntentIsSettledByListNeverResent(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	f := setupOnClock(t, []omisetest.Option{omisetest.WithListDelay(time.Hour)}, clock.Now)
	f.srv.Fail("late", fakes.Post) // charged, answer lost, and not listed for an hour
	ctx := context.Background()
	_, err := f.client.Charge(ctx, thb("late", "tokn_test_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	posts := f.srv.Stats().Requests

	clock.Advance(23*time.Hour + time.Second) // past Config.KeyRetention's default, on the store's clock
	ch, err := f.client.Charge(ctx, thb("late", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, "successful", ch.Status)
	assert.Equal(t, posts, f.srv.Stats().Requests, "no POST after the window")
	assert.Equal(t, 1, f.srv.Ledger().Count("late"))
}

func TestSavedCards(t *testing.T) {
	t.Run("refused by default", func(t *testing.T) {
		req := thb("o", "card_test_1")
		req.Customer = "cust_test_1"
		err := omise.Provider{}.Validate(req)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	})
	t.Run("charged when allowed", func(t *testing.T) {
		f := setup(t, nil, func(cfg *idempay.Config) { cfg.Provider = omise.Provider{SavedCards: true} })
		req := thb("o", "card_test_1")
		req.Customer = "cust_test_1"
		ch, err := f.client.Charge(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, idempay.StateSucceeded, ch.State)
	})
	t.Run("nothing found is no proof", func(t *testing.T) {
		f := setup(t, nil, func(cfg *idempay.Config) { cfg.Provider = omise.Provider{SavedCards: true} })
		f.srv.Fail("o", fakes.Pre)
		req := idempay.ChargeRequest{IntentID: "o", Amount: 150000, Currency: "THB", Customer: "cust_test_1"}
		_, err := f.client.Charge(context.Background(), req)
		assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
		assert.Equal(t, 1, f.srv.Stats().Requests, "a saved card is never resent blindly")
		_, err = f.client.Settle(context.Background(), "o")
		assert.ErrorIs(t, err, omise.ErrNoProof)
		assert.Equal(t, 1, f.srv.Stats().Requests)
	})
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name     string
		token    string
		secret   idempay.Secret
		sentinel error
		code     string
	}{
		{"bad secret", "tokn_test_visa", "skey_test_wrong", idempay.ErrConfig, "authentication_failure"},
		{"fraud check", "tokn_test_fraud", secret, idempay.ErrDeclined, "failed_fraud_check"},
		{"unknown token", "tokn_test_missing", secret, idempay.ErrInvalidRequest, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, nil, func(cfg *idempay.Config) { cfg.Credentials = tc.secret })
			_, err := f.client.Charge(context.Background(), thb("o", tc.token))
			assert.ErrorIs(t, err, tc.sentinel)
			assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
			var apiErr *idempay.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.Equal(t, 1, f.srv.Stats().Requests)
		})
	}
}

// With keys honoured (undocumented), a resend after proof is answered
// like any other: nothing in the adapter depends on it.
func TestHonouredKeysChangeNothing(t *testing.T) {
	f := setup(t, []omisetest.Option{omisetest.WithIdempotencyKeys()})
	f.srv.Fail("o", fakes.Internal)
	ch, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Requests)
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}

// A lookup that fails proves nothing: the guard stops with the outcome
// unknown instead of resending.
func TestFailedLookupNeverAllowsResend(t *testing.T) {
	f := setup(t, []omisetest.Option{omisetest.WithLookupFailures(1)})
	f.srv.Fail("o", fakes.Pre)
	_, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 1, f.srv.Stats().Requests, "not resent")

	require.NoError(t, f.srv.SetLookupFailures(0))
	ch, err := f.client.Charge(context.Background(), thb("o", "tokn_test_visa"))
	require.NoError(t, err)
	assert.Equal(t, 1, ch.Requests, "resent once the lookup proved no charge")
	assert.Equal(t, 1, f.srv.Ledger().Count("o"))
}
