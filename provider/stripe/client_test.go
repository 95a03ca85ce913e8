package stripe_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChargeSucceeds(t *testing.T) {
	srv, c, store := setup(t, nil)
	req := order("order-1", "pm_card_visa")
	req.Metadata = map[string]string{"shop": "tokyo"}
	req.Description = "Order 1"
	ch, err := c.Charge(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, "succeeded", ch.Status)
	assert.Equal(t, int64(1500), ch.Amount)
	assert.Equal(t, "JPY", ch.Currency)
	assert.NotEmpty(t, ch.RequestID)
	assert.Equal(t, 1, ch.Requests)
	assert.False(t, ch.Replayed)

	pi, ok := srv.PaymentIntent(ch.ID)
	require.True(t, ok)
	assert.Equal(t, "jpy", pi.Currency)
	assert.Equal(t, map[string]string{"idempay_intent": "order-1", "idempay_namespace": ns, "idempay_key": ch.Key,
		"idempay_confirm": "true", "shop": "tokyo"}, pi.Metadata)
	assert.Equal(t, "Order 1", *pi.Description)
	rec, err := store.Load(context.Background(), c.Namespace(), "order-1")
	require.NoError(t, err)
	assert.Equal(t, ch.ID, rec.ProviderRef)
	assert.Equal(t, 1, srv.Ledger().Count("order-1"))
}

// A lost answer is retried with the same key; Stripe answers the retry
// with the stored result, marked replayed.
func TestLostAnswerIsReplayed(t *testing.T) {
	srv, c, _ := setup(t, nil)
	srv.Fail("o", fakes.Post)
	ch, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Requests)
	assert.True(t, ch.Replayed)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
	assert.Equal(t, 1, srv.Ledger().Count("o"))
	assert.Len(t, srv.Stats().Keys["o"], 1)
}

// Stripe stores a 500 produced while executing and replays it for the
// key: the client stops at the first replayed one, and the outcome is
// unknown (the key stays open), never failed.
func TestReplayedServerErrorEndsAfterOneRequest(t *testing.T) {
	srv, c, store := setup(t, nil)
	srv.Fail("o", fakes.Internal)
	_, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrStoredFailure)
	assert.Equal(t, 2, srv.Stats().Requests, "the fresh 500 is retried once, and its replay ends the flight")

	before := srv.Stats().Requests
	_, err = c.Charge(context.Background(), order("o", "pm_card_visa"))
	assert.Equal(t, 1, srv.Stats().Requests-before, "a resumed intent whose key holds a stored 500 sends one request")
	assert.ErrorIs(t, err, idempay.ErrStoredFailure)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.Status)
	assert.True(t, apiErr.Replayed)
	assert.Equal(t, "api_error", apiErr.Type)
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, idempay.StateOpen, rec.State, "the key stays open for settlement")
	assert.Zero(t, srv.Ledger().Count("o"))
}

// An intent still unknown past the retention window is settled by search,
// and its key, which Stripe may have forgotten, is never sent again.
func TestExpiredIntentIsSettledBySearchNeverResent(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	// The key's age is the store's: Stripe and the store share the clock.
	srv, c, _ := setupStore(t, memstore.New(memstore.WithClock(clock.Now)),
		[]stripetest.Option{stripetest.WithSettings(fakes.Settings{Clock: clock.Now}), stripetest.WithSearchDelay(time.Minute)})
	// Stripe charges on the first attempt; every answer is lost.
	srv.Fail("late", fakes.Post, fakes.Post, fakes.Post, fakes.Post, fakes.Post)
	_, err := c.Charge(context.Background(), order("late", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	posts := srv.Stats().Requests
	require.Equal(t, 5, posts)

	clock.Advance(23*time.Hour + time.Second) // past Config.KeyRetention's default, on the store's clock
	ch, err := c.Charge(context.Background(), order("late", "pm_card_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, "succeeded", ch.Status)
	assert.Equal(t, posts, srv.Stats().Requests, "no POST after the window")
	assert.Equal(t, 1, srv.Stats().Searches)
	assert.Equal(t, 1, srv.Ledger().Count("late"))

	again, err := c.Charge(context.Background(), order("late", "pm_card_visa"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, posts, srv.Stats().Requests)
}

// Search lags writes: past the window, an intent not yet searchable stays
// unknown (not failed, not resent) until search sees it.
func TestExpiredIntentNotYetSearchableStaysUnknown(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	srv, c, _ := setupStore(t, memstore.New(memstore.WithClock(clock.Now)),
		[]stripetest.Option{stripetest.WithSettings(fakes.Settings{Clock: clock.Now}), stripetest.WithSearchDelay(48 * time.Hour)},
		func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	srv.Fail("lag", fakes.Post)
	_, err := c.Charge(context.Background(), order("lag", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)

	clock.Advance(24 * time.Hour)
	_, err = c.Charge(context.Background(), order("lag", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	_, err = c.Settle(context.Background(), "lag")
	assert.ErrorIs(t, err, stripe.ErrNotIndexed)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, 1, srv.Stats().Requests, "never resent")

	clock.Advance(24 * time.Hour)
	ch, err := c.Settle(context.Background(), "lag")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 1, srv.Stats().Requests)
}

func TestDeclineIsDefinite(t *testing.T) {
	srv, c, _ := setup(t, nil)
	_, err := c.Charge(context.Background(), order("o", "pm_card_chargeDeclinedInsufficientFunds"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusPaymentRequired, apiErr.Status)
	assert.Equal(t, "card_error", apiErr.Type)
	assert.Equal(t, "card_declined", apiErr.Code)
	assert.Equal(t, "insufficient_funds", apiErr.DeclineCode)
	assert.Equal(t, 1, srv.Stats().Requests)
}

// A decline whose answer was lost is replayed as the same decline: still
// definite, since Stripe stored it for the key.
func TestReplayedDeclineIsDefinite(t *testing.T) {
	srv, c, _ := setup(t, nil)
	srv.Fail("o", fakes.Post)
	_, err := c.Charge(context.Background(), order("o", "pm_card_chargeDeclined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, 2, srv.Stats().Requests)
}

func TestThreeDSecureThenSettle(t *testing.T) {
	srv, c, store := setup(t, nil)
	req := order("3ds", "pm_card_threeDSecure2Required")
	req.ReturnURL = "https://shop.example/return"
	ch, err := c.Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.Equal(t, "requires_action", ch.Status)
	assert.True(t, strings.HasPrefix(ch.AuthorizeURL, "https://"), ch.AuthorizeURL)
	rec, _ := store.Load(context.Background(), c.Namespace(), "3ds")
	assert.Equal(t, idempay.StatePending, rec.State)

	require.True(t, srv.Complete(ch.ID, true))
	done, err := c.Settle(context.Background(), "3ds")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, done.State)
	assert.Equal(t, ch.ID, done.ID)
	assert.Equal(t, 1, srv.Stats().Requests)
	assert.Equal(t, 1, srv.Stats().Retrievals, "settled by ID, not by search")
}

// After a failed 3-D Secure the PaymentIntent waits in
// requires_payment_method with a last_payment_error. The adapter's own
// request confirmed it, so that is the decline of its confirm, as a 402
// would have been: the intent is closed failed, never resent.
func TestThreeDSecureFailureIsTheConfirmsDecline(t *testing.T) {
	srv, c, store := setup(t, nil)
	req := order("3ds", "pm_card_threeDSecure2Required")
	req.ReturnURL = "https://shop.example/return"
	ch, err := c.Charge(context.Background(), req)
	requirePending(t, ch, err)
	require.True(t, srv.Complete(ch.ID, false))
	_, err = c.Charge(context.Background(), req) // a pending intent is settled by lookup
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "payment_intent_authentication_failure", apiErr.Code)
	rec, _ := store.Load(context.Background(), c.Namespace(), "3ds")
	assert.Equal(t, idempay.StateFailed, rec.State)
	assert.Equal(t, 1, srv.Stats().Requests, "never resent")
}

// A PaymentIntent made with capture_method=manual waits in
// requires_capture: the authorisation is settled (never resent), but no
// money moved, so Charge answers it pending with ErrAuthorized (Authorized
// set) until a capture succeeds; then it answers succeeded, with what was
// captured.
func TestManualCaptureIsAuthorisedSuccess(t *testing.T) {
	srv, c, store := setup(t, nil)
	req := order("auth", "pm_card_visa")
	req.Extra = map[string]string{"capture_method": "manual"}
	ch, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch)
	assert.True(t, ch.Authorized)
	assert.Equal(t, idempay.StatePending, ch.State, "pending until captured, as OutcomeOf says")
	assert.Equal(t, "requires_capture", ch.Status)
	rec, _ := store.Load(context.Background(), c.Namespace(), "auth")
	assert.Equal(t, idempay.StateSucceeded, rec.State, "settled: never resent")
	assert.Equal(t, 1, srv.Ledger().Count("auth"))

	_, err = c.Charge(context.Background(), req) // from the store, the same answer
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	assert.Equal(t, 1, srv.Stats().Requests)

	_, err = c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "auth-cp", IntentID: "auth", Currency: "JPY"})
	require.NoError(t, err)
	ch, err = c.Charge(context.Background(), req)
	require.NoError(t, err, "captured: succeeded")
	assert.Equal(t, int64(1500), ch.Captured)
}

// Without a payment method the PaymentIntent is created unconfirmed: it is
// pending, for the customer to confirm on the client side.
func TestUnconfirmedIntentIsPending(t *testing.T) {
	_, c, _ := setup(t, nil)
	req := order("later", "")
	ch, err := c.Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.Equal(t, "requires_payment_method", ch.Status)
}

// The key was used with other parameters before (by another system
// sharing the key): Stripe refuses, and the outcome is unknown.
func TestKeyConflictIsUnknown(t *testing.T) {
	store := memstore.New()
	srv, base := startFake(t, store, nil)
	c := newClient(t, base, store, func(cfg *idempay.Config) { cfg.NewKey = func() string { return "shared-key" } })
	form := url.Values{"amount": {"999"}, "currency": {"jpy"}}
	r, _ := http.NewRequest(http.MethodPost, base+"/v1/payment_intents", strings.NewReader(form.Encode()))
	r.Header.Set("Authorization", "Bearer "+secret)
	r.Header.Set("Idempotency-Key", "shared-key")
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	resp.Body.Close()

	_, err = c.Charge(context.Background(), order("o", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrKeyConflict)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 2, srv.Stats().Requests, "not retried")
}

// A crashed request holds the key until its lease ends: 409s are retried
// and, past the budget, the outcome is unknown and in progress.
func TestKeyInUseIsRetriedThenInProgress(t *testing.T) {
	srv, c, _ := setup(t, []stripetest.Option{stripetest.WithSettings(fakes.Settings{Lease: time.Hour})})
	srv.Fail("o", fakes.Mid)
	_, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrInProgress)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 5, srv.Stats().Requests)
	assert.Equal(t, 4, srv.Stats().Statuses[http.StatusConflict])
}

// Stripe-Should-Retry: false stops retries the status alone would allow.
func TestShouldRetryFalseIsHonoured(t *testing.T) {
	srv, c, _ := setup(t, []stripetest.Option{stripetest.WithShouldRetry()})
	srv.Fail("o", fakes.Internal)
	_, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, 1, srv.Stats().Requests, "a fresh 500 with Stripe-Should-Retry: false is not retried")
}

// A refused secret moved no money. The attempt is recorded as failed, and
// once the secret is fixed the same request begins a new attempt, with a
// new key, that charges once.
func TestWrongSecretIsConfigError(t *testing.T) {
	store := memstore.New()
	srv, base := startFake(t, store, nil)
	c := newClient(t, base, store, func(cfg *idempay.Config) { cfg.Credentials = "sk_test_wrong" })
	_, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	assert.ErrorIs(t, err, idempay.ErrConfig)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, 1, srv.Stats().Requests)
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, idempay.StateFailed, rec.State, "a failed attempt: nothing reached the part of Stripe that moves money")

	fixed := newClient(t, base, store)
	ch, err := fixed.Charge(context.Background(), order("o", "pm_card_visa"))
	require.NoError(t, err, "charged once the secret is fixed")
	assert.Equal(t, 2, ch.Attempt)
	assert.NotEqual(t, rec.Key, ch.Key)
	assert.Equal(t, 1, srv.Ledger().Count("o"))
}
