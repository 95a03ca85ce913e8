package stripe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
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

// direct sends a POST to the fake as someone else would (the Dashboard,
// another integration), under a key of its own.
func direct(t *testing.T, srv *stripetest.Server, path, key string, form url.Values) (int, map[string]any) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	r.Header.Set("Authorization", "Bearer "+secret)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Idempotency-Key", "direct-"+key)
	resp, err := srv.Client().Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// charged charges intent id (authorised only if manual) and returns its
// PaymentIntent ID.
func charged(t *testing.T, c *idempay.Client, id string, manual bool) string {
	t.Helper()
	req := order(id, "pm_card_visa")
	if manual {
		req.Extra = map[string]string{stripe.ExtraCaptureMethod: "manual"}
	}
	ch, err := c.Charge(context.Background(), req)
	if manual {
		require.ErrorIs(t, err, idempay.ErrAuthorized)
	} else {
		require.NoError(t, err)
	}
	return ch.ID
}

func refundOf(id, intent string, amount int64) idempay.RefundRequest {
	return idempay.RefundRequest{RefundID: id, IntentID: intent, Amount: amount, Currency: "JPY"}
}

// Partial refunds add up to the charge and no further: each is one Stripe
// refund under one key; one beyond what is left is refused before it is
// sent; asked again, a refund answers from the store.
func TestRefundsAddUpToTheCharge(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", false)
	for i, amount := range []int64{600, 900} {
		op, err := c.Refund(context.Background(), refundOf("rf-"+string(rune('a'+i)), "o", amount))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(op.ID, "re_"), op.ID)
		assert.Equal(t, amount, op.Amount)
		assert.Equal(t, "succeeded", op.Status)
	}
	_, err := c.Refund(context.Background(), refundOf("rf-c", "o", 1))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds)
	op, err := c.Refund(context.Background(), refundOf("rf-a", "o", 600))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, op.ReplayedFrom)

	assert.Equal(t, 2, srv.Stats().Ops.Requests, "one request per refund")
	assert.Len(t, srv.Refunds(pi), 2)
	assert.EqualValues(t, 1500, srv.Ledger().Refunded("o"))
	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.EqualValues(t, 1500, l.Refunded)
	assert.Zero(t, l.Refundable)
}

// Stripe refunds, the answer is lost: the retry with the same key gets
// Stripe's stored answer, marked replayed; one refund.
func TestRefundLostAnswerIsReplayedNotRepeated(t *testing.T) {
	srv, c, _ := setup(t, nil)
	charged(t, c, "o", false)
	srv.Fail("rf", fakes.Post)
	op, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, 2, op.Requests)
	assert.Equal(t, 1, srv.Ledger().OpCount("rf"))
	assert.Len(t, srv.Stats().Ops.Keys["rf"], 1, "one key over every retry")
}

// Every answer lost: the refund is unknown, and counts against what is
// left until it settles; the next call resumes it with the same key and
// settles it by Stripe's replay. Refunded once.
func TestRefundEveryAnswerLostIsUnknownThenSettled(t *testing.T) {
	srv, c, _ := setup(t, nil)
	charged(t, c, "o", false)
	srv.Fail("rf", slices.Repeat([]fakes.Fault{fakes.Post}, 5)...)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 1000))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	l, _ := c.Ledger(context.Background(), "o")
	assert.EqualValues(t, 1000, l.RefundsInFlight)
	_, err = c.Refund(context.Background(), refundOf("rf-2", "o", 501))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds, "the unknown refund counts")

	op, err := c.Refund(context.Background(), refundOf("rf", "o", 1000))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, 1, srv.Ledger().OpCount("rf"))
	assert.Len(t, srv.Stats().Ops.Keys["rf"], 1)
}

// A 503 is answered before Stripe acts: retried with the same key.
func TestRefund503IsRetried(t *testing.T) {
	srv, c, _ := setup(t, nil)
	charged(t, c, "o", false)
	srv.Fail("rf", fakes.Unavailable, fakes.Pre)
	op, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.NoError(t, err)
	assert.Equal(t, 3, op.Requests)
	assert.Equal(t, 1, srv.Ledger().OpCount("rf"))
}

// A key held by a request that crashed at Stripe: 409s are retried, then
// the outcome is unknown (in progress), never failed.
func TestRefundKeyInUseIsRetriedThenUnknown(t *testing.T) {
	srv, c, _ := setup(t, []stripetest.Option{stripetest.WithSettings(fakes.Settings{Lease: time.Hour})})
	charged(t, c, "o", false)
	srv.Fail("rf", fakes.Mid)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrInProgress)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, 4, srv.Stats().Ops.Statuses[http.StatusConflict])
	assert.Zero(t, srv.Ledger().OpCount("rf"))
}

// The key was used by someone else with other parameters: unknown, not
// retried, never failed.
func TestRefundKeyConflictIsUnknown(t *testing.T) {
	srv, c, _ := setup(t, nil, func(cfg *idempay.Config) {
		n := 0
		cfg.NewKey = func() string { n++; return []string{"k-charge", "direct-shared"}[min(n-1, 1)] }
	})
	pi := charged(t, c, "o", false)
	status, _ := direct(t, srv, "/v1/refunds", "shared", url.Values{"payment_intent": {pi}, "amount": {"1"}})
	require.Equal(t, 200, status)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrKeyConflict)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, 2, srv.Stats().Ops.Requests, "not retried")
}

// Refunded in full outside idempay (the Dashboard): Stripe refuses the
// refund with charge_already_refunded. Nothing earlier was sent under the
// key: failed, for good (the same call answers from the store).
func TestRefundRefusedByStripeIsFailed(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", false)
	status, _ := direct(t, srv, "/v1/refunds", "dash", url.Values{"payment_intent": {pi}})
	require.Equal(t, 200, status)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "charge_already_refunded", apiErr.Code)
	_, err = c.Refund(context.Background(), refundOf("rf", "o", 500))
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, 1, srv.Stats().Ops.ByID["rf"], "answered from the store")
	l, _ := c.Ledger(context.Background(), "o")
	assert.Zero(t, l.RefundsInFlight+l.Refunded, "a refusal frees its amount")
}

// Stripe refuses the refund (beyond what is left: refunded in part outside
// idempay) and the answer is lost: the retry gets the refusal replayed,
// which Stripe stored for the key, so it speaks for the lost attempt too:
// failed, declined, not unknown.
func TestRefundReplayedRefusalIsDefinite(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", false)
	status, _ := direct(t, srv, "/v1/refunds", "dash", url.Values{"payment_intent": {pi}, "amount": {"1200"}})
	require.Equal(t, 200, status)
	srv.Fail("rf", fakes.Post)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Empty(t, apiErr.Code, "Stripe sends no code for an over-refund")
	assert.Equal(t, "amount", apiErr.Param)
	assert.Contains(t, apiErr.Message, "is greater than")
	assert.True(t, apiErr.Replayed)
	assert.EqualValues(t, 1200, srv.Ledger().Refunded("o"))
}

// A pending refund (Stripe has not paid it out) counts until it settles;
// the next call settles it by retrieving the refund, without a POST: paid
// out, it succeeds; failed, it frees its amount for another refund.
func TestPendingRefundSettlesByRetrieve(t *testing.T) {
	srv, c, _ := setup(t, []stripetest.Option{stripetest.WithPendingRefunds()})
	charged(t, c, "o", false)
	op, err := c.Refund(context.Background(), refundOf("rf-ok", "o", 500))
	require.ErrorIs(t, err, idempay.ErrPending)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, op)
	assert.Equal(t, "pending", op.Status)
	okID := op.ID
	op, err = c.Refund(context.Background(), refundOf("rf-bad", "o", 1000))
	require.ErrorIs(t, err, idempay.ErrPending)
	badID := op.ID
	_, err = c.Refund(context.Background(), refundOf("rf-more", "o", 1))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds, "pending refunds count")

	_, err = c.Refund(context.Background(), refundOf("rf-ok", "o", 500))
	require.ErrorIs(t, err, idempay.ErrPending, "still pending at Stripe")
	require.True(t, srv.CompleteRefund(okID, true))
	require.True(t, srv.CompleteRefund(badID, false))
	posts := srv.Stats().Ops.Requests

	op, err = c.Refund(context.Background(), refundOf("rf-ok", "o", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, "succeeded", op.Status)
	_, err = c.Refund(context.Background(), refundOf("rf-bad", "o", 1000))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "refund_failed", apiErr.Code)
	assert.Equal(t, posts, srv.Stats().Ops.Requests, "settled by lookup, not resent")

	l, _ := c.Ledger(context.Background(), "o")
	assert.EqualValues(t, 500, l.Refunded)
	assert.EqualValues(t, 1000, l.Refundable, "the failed refund freed its amount")
	_, err = c.Refund(context.Background(), refundOf("rf-again", "o", 1000))
	require.ErrorIs(t, err, idempay.ErrPending)
}

// Clocks shared by the store and the fake, for tests past the key's
// retention.
func retentionSetup(t *testing.T, opts ...stripetest.Option) (*fakes.Clock, *stripetest.Server, *idempay.Client) {
	clock := fakes.NewClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	srv, c, _ := setupStore(t, memstore.New(memstore.WithClock(clock.Now)),
		append(opts, stripetest.WithSettings(fakes.Settings{Clock: clock.Now})))
	return clock, srv, c
}

// A refund whose answers were all lost, past the key's retention: its key
// is never sent again; the PaymentIntent's refunds are listed, and the
// one tagged with the refund's ID, namespace and key settles it.
func TestRefundPastRetentionIsSettledByListNeverResent(t *testing.T) {
	clock, srv, c := retentionSetup(t)
	charged(t, c, "o", false)
	srv.Fail("rf", slices.Repeat([]fakes.Fault{fakes.Post}, 5)...)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	posts := srv.Stats().Ops.Requests

	clock.Advance(23*time.Hour + time.Second)
	op, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, posts, srv.Stats().Ops.Requests, "never resent")
	assert.Equal(t, 1, srv.Stats().RefundLookups)
	assert.Equal(t, 1, srv.Ledger().OpCount("rf"))
}

// Stripe stored a 500 for the refund's key: replays of it settle nothing,
// and are not retried. Past the retention the PaymentIntent's refunds are
// listed (a list, not search: it does not lag) and none carries the
// refund's tags: proof that the attempt refunded nothing. The refund is
// failed, its amount is free again, and the same refund ID refunds under a
// new key.
func TestRefundStoredFailureNotListedPastRetentionIsFailed(t *testing.T) {
	clock, srv, c := retentionSetup(t)
	charged(t, c, "o", false)
	srv.Fail("rf", fakes.Internal)
	_, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrStoredFailure)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	posts := srv.Stats().Ops.Requests
	assert.Equal(t, 2, posts, "the fresh 500 is retried once; its replay stops")

	clock.Advance(23*time.Hour + time.Second)
	_, err = c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "the list proves nothing was refunded")
	assert.Equal(t, posts, srv.Stats().Ops.Requests, "never resent")
	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Zero(t, l.RefundsInFlight, "its amount is free again")

	op, err := c.Refund(context.Background(), refundOf("rf", "o", 500))
	require.NoError(t, err, "the refund ID is retried under a new key")
	assert.Equal(t, "succeeded", op.Status)
	assert.EqualValues(t, 500, srv.Ledger().Refunded("o"))
}

// findRefund calls FindOp on the fake for refund attempt key of
// refund ID id of intent o, on PaymentIntent pi.
func findRefund(t *testing.T, srv *stripetest.Server, pi, id, key string) (idempay.Verdict, error) {
	op := idempay.OpRequest{Type: idempay.OpRefund, ID: id, IntentID: "o", ChargeRef: pi, Amount: 1, Currency: "JPY"}
	rec := idempay.Record{Namespace: ns + "/refund", ID: id, Attempt: 1, Key: key}
	return stripe.Provider{}.FindOp(context.Background(), &http.Client{}, fakeTarget(t, srv), op, rec)
}

func tagged(pi, op, namespace, key string) url.Values {
	f := url.Values{"payment_intent": {pi}, "amount": {"1"}}
	for k, v := range map[string]string{"idempay_op": op, "idempay_intent": "o", "idempay_namespace": namespace, "idempay_key": key} {
		if v != "" {
			f.Set("metadata["+k+"]", v)
		}
	}
	return f
}

// A lookup takes only the refund attempt it is for: tagged with its
// refund ID, the namespace and the attempt's key. Another attempt's
// refund of the same refund ID, another namespace's, another refund's,
// an untagged one say nothing of it; two of its own are for a person to
// reconcile; none in the whole list is KindNotFound (a list does not lag).
func TestFindRefundTakesOnlyItsOwn(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", false)
	for i, f := range []url.Values{
		tagged(pi, "rf", ns, "k-earlier"),             // an earlier attempt
		tagged(pi, "rf", "stripe:other-account", "k"), // another namespace
		tagged(pi, "rf-other", ns, "k"),               // another refund
		{"payment_intent": {pi}, "amount": {"1"}},     // untagged
	} {
		status, body := direct(t, srv, "/v1/refunds", "r"+string(rune('0'+i)), f)
		require.Equal(t, 200, status, body)
	}
	v, err := findRefund(t, srv, pi, "rf", "k")
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "the whole list lacks it")

	_, mine := direct(t, srv, "/v1/refunds", "mine", tagged(pi, "rf", ns, "k"))
	v, err = findRefund(t, srv, pi, "rf", "k")
	require.NoError(t, err)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, mine["id"], v.Operation.ID)

	direct(t, srv, "/v1/refunds", "twin", tagged(pi, "rf", ns, "k"))
	_, err = findRefund(t, srv, pi, "rf", "k")
	require.ErrorIs(t, err, stripe.ErrAmbiguousRefund)

	// By the record's reference, a refund tagged otherwise is refused.
	other := srv.Refunds(pi)[len(srv.Refunds(pi))-1] // the oldest: another attempt's
	op := idempay.OpRequest{Type: idempay.OpRefund, ID: "rf", IntentID: "o", ChargeRef: pi}
	_, err = stripe.Provider{}.FindOp(context.Background(), &http.Client{}, fakeTarget(t, srv), op,
		idempay.Record{Namespace: ns + "/refund", ID: "rf", Attempt: 2, Key: "k", ProviderRef: other.ID})
	require.ErrorIs(t, err, stripe.ErrForeignRefund)
}

// The list is read page by page (100 a page, newest first): a refund made
// before 100 others is found on the second page.
func TestFindRefundReadsEveryPage(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", false)
	direct(t, srv, "/v1/refunds", "first", tagged(pi, "rf", ns, "k"))
	for i := range 105 {
		status, _ := direct(t, srv, "/v1/refunds", "n"+strings.Repeat("x", i), url.Values{"payment_intent": {pi}, "amount": {"1"}})
		require.Equal(t, 200, status)
	}
	lookups := srv.Stats().RefundLookups
	v, err := findRefund(t, srv, pi, "rf", "k")
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, 2, srv.Stats().RefundLookups-lookups, "two pages")
}

// A capture tags the PaymentIntent with the capture's ID and leaves the
// charge's tags as they were: the charge is still found by retrieve as
// the intent's own. Captured, the charge answers succeeded with what was
// captured; a lost answer is replayed, never a second capture.
func TestCaptureKeepsTheChargesTags(t *testing.T) {
	srv, c, store := setup(t, nil)
	pi := charged(t, c, "o", true)
	srv.Fail("cp", fakes.Post)
	op, err := c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Amount: 1200,
		Currency: "JPY", Metadata: map[string]string{"shipment": "S-1"}})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, pi, op.ID)
	assert.EqualValues(t, 1200, op.Amount)
	assert.Equal(t, 1, srv.Ledger().OpCount("cp"))

	got, _ := srv.PaymentIntent(pi)
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, rec.Key, got.Metadata[stripe.KeyMetadataKey], "the charge's key tag")
	assert.Equal(t, "cp", got.Metadata[stripe.OpMetadataKey])
	assert.Equal(t, "S-1", got.Metadata["shipment"])
	v, err := stripe.Provider{}.FindCharge(context.Background(), &http.Client{}, fakeTarget(t, srv), rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind)

	ch, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.NoError(t, err)
	assert.EqualValues(t, 1200, ch.Captured)
	_, err = c.Refund(context.Background(), refundOf("rf", "o", 1201))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds, "only what was captured")
	_, err = c.Refund(context.Background(), refundOf("rf", "o", 1200))
	require.NoError(t, err)
}

// Captured outside idempay: Stripe refuses the capture
// (payment_intent_unexpected_state); nothing earlier was sent: failed.
func TestCaptureRefusedWhenCapturedOutside(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", true)
	status, _ := direct(t, srv, "/v1/payment_intents/"+pi+"/capture", "dash", url.Values{})
	require.Equal(t, 200, status)
	_, err := c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "payment_intent_unexpected_state", apiErr.Code)
}

func findOp(t *testing.T, srv *stripetest.Server, typ idempay.OpType, pi, id string, namespace string) (idempay.Verdict, error) {
	op := idempay.OpRequest{Type: typ, ID: id, IntentID: "o", ChargeRef: pi, Currency: "JPY"}
	rec := idempay.Record{Namespace: ns + "/" + string(typ), ID: id, Attempt: 1, Key: "k"}
	tg := fakeTarget(t, srv)
	tg.Namespace = namespace
	p := stripe.Provider{}
	if typ == idempay.OpCapture {
		return p.FindOp(context.Background(), &http.Client{}, tg, op, rec)
	}
	return p.FindOp(context.Background(), &http.Client{}, tg, op, rec)
}

// What a retrieved PaymentIntent proves of a capture and of a cancel.
func TestFindCaptureAndCancel(t *testing.T) {
	srv, c, _ := setup(t, nil)
	held := charged(t, c, "o", true)
	v, err := findOp(t, srv, idempay.OpCapture, held, "cp", ns)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "requires_capture: not captured")
	v, err = findOp(t, srv, idempay.OpCancel, held, "cn", ns)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "requires_capture: not cancelled")
	_, err = findOp(t, srv, idempay.OpCapture, held, "cp", "stripe:other-account")
	require.ErrorIs(t, err, stripe.ErrForeignIntent, "another namespace's PaymentIntent")

	direct(t, srv, "/v1/payment_intents/"+held+"/capture", "cp", url.Values{"metadata[idempay_op]": {"cp"}, "amount_to_capture": {"700"}})
	v, err = findOp(t, srv, idempay.OpCapture, held, "cp", ns)
	require.NoError(t, err)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.EqualValues(t, 700, v.Operation.Amount)
	v, err = findOp(t, srv, idempay.OpCapture, held, "cp-other", ns)
	require.ErrorIs(t, err, stripe.ErrCapturedElsewhere)
	assert.Equal(t, idempay.KindUnknown, v.Kind, "captured, not by this capture: unknown")
	v, err = findOp(t, srv, idempay.OpCancel, held, "cn", ns)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindDeclined, v.Kind, "captured: can never be cancelled")

	voided := charged(t, c, "o2", true)
	direct(t, srv, "/v1/payment_intents/"+voided+"/cancel", "cn", url.Values{})
	op := func(typ idempay.OpType) (idempay.Verdict, error) {
		o := idempay.OpRequest{Type: typ, ID: "x", IntentID: "o2", ChargeRef: voided}
		rec := idempay.Record{Namespace: ns + "/" + string(typ), ID: "x", Attempt: 1, Key: "k"}
		if typ == idempay.OpCapture {
			return stripe.Provider{}.FindOp(context.Background(), &http.Client{}, fakeTarget(t, srv), o, rec)
		}
		return stripe.Provider{}.FindOp(context.Background(), &http.Client{}, fakeTarget(t, srv), o, rec)
	}
	v, err = op(idempay.OpCancel)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindSucceeded, v.Kind, "canceled: voided")
	v, err = op(idempay.OpCapture)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindDeclined, v.Kind, "canceled: can never be captured")
}

// A capture and a cancel whose answers were all lost, past the key's
// retention, are settled by retrieving the PaymentIntent; never resent.
func TestCaptureAndCancelPastRetentionAreSettledByRetrieve(t *testing.T) {
	clock, srv, c := retentionSetup(t)
	captured := charged(t, c, "o", true)
	voided := charged(t, c, "o2", true)
	srv.Fail("cp", slices.Repeat([]fakes.Fault{fakes.Post}, 5)...)
	srv.Fail(voided, slices.Repeat([]fakes.Fault{fakes.Post}, 5)...) // a cancel is scripted by its PaymentIntent
	_, err := c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	_, err = c.Cancel(context.Background(), idempay.CancelRequest{CancelID: "cn", IntentID: "o2"})
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	posts := srv.Stats().Ops.Requests

	clock.Advance(23*time.Hour + time.Second)
	op, err := c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, captured, op.ID)
	op, err = c.Cancel(context.Background(), idempay.CancelRequest{CancelID: "cn", IntentID: "o2"})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	assert.Equal(t, posts, srv.Stats().Ops.Requests, "never resent")

	_, err = c.Charge(context.Background(), order("o2", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrCanceled)
	ch, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.NoError(t, err)
	assert.EqualValues(t, 1500, ch.Captured)
}

// A cancel whose answer is lost is replayed; the intent then answers
// failed with ErrCanceled, and its capture is refused before it is sent.
func TestCancelLostAnswerIsReplayed(t *testing.T) {
	srv, c, _ := setup(t, nil)
	pi := charged(t, c, "o", true)
	srv.Fail(pi, fakes.Post)
	op, err := c.Cancel(context.Background(), idempay.CancelRequest{CancelID: "cn", IntentID: "o",
		Reason: stripe.ReasonRequestedByCustomer})
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, "canceled", op.Status)
	got, _ := srv.PaymentIntent(pi)
	require.NotNil(t, got.CancellationReason)
	assert.Equal(t, "requested_by_customer", *got.CancellationReason)
	_, err = c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrCanceled)
	_, err = c.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
	assert.Equal(t, 2, srv.Stats().Ops.Requests)
}

// listServer answers GET /v1/refunds with pages[starting_after] and counts
// the pages read.
func listServer(t *testing.T, pages map[string]string) (idempay.Target, *int) {
	t.Helper()
	var reads int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads++
		body, ok := pages[r.URL.Query().Get("starting_after")]
		if !ok {
			http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}, &reads
}

// A refund list proves absence only when every page was read and every
// entry understood: a refund on a later page is found there; an entry
// that is not a refund, or a page that says more follow and has none,
// leaves the refund unknown.
func TestFindRefundReadsEveryPageBeforeNotFound(t *testing.T) {
	const other = `{"id":"re_other","object":"refund","status":"succeeded","amount":1,"currency":"jpy","payment_intent":"pi_1","metadata":{}}`
	const mine = `{"id":"re_mine","object":"refund","status":"succeeded","amount":1,"currency":"jpy","payment_intent":"pi_1",` +
		`"metadata":{"idempay_op":"rf","idempay_intent":"o","idempay_namespace":"` + ns + `","idempay_key":"k"}}`
	op := idempay.OpRequest{Type: idempay.OpRefund, ID: "rf", IntentID: "o", ChargeRef: "pi_1", Amount: 1, Currency: "JPY"}
	rec := idempay.Record{Namespace: ns + "/refund", ID: "rf", Attempt: 1, Key: "k"}
	page := func(more bool, data ...string) string {
		return `{"object":"list","has_more":` + strconv.FormatBool(more) + `,"data":[` + strings.Join(data, ",") + `]}`
	}
	for _, tc := range []struct {
		name  string
		pages map[string]string
		kind  idempay.Kind
		reads int
	}{
		{"on the second page", map[string]string{"": page(true, other), "re_other": page(false, mine)}, idempay.KindSucceeded, 2},
		{"on no page", map[string]string{"": page(true, other), "re_other": page(false)}, idempay.KindNotFound, 2},
		{"an unreadable entry", map[string]string{"": page(false, other, `{"id":"x","object":"charge"}`)}, idempay.KindUnknown, 1},
		{"more promised, none given", map[string]string{"": page(true)}, idempay.KindUnknown, 1},
		{"no data member", map[string]string{"": `{"object":"list","has_more":false}`}, idempay.KindUnknown, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, reads := listServer(t, tc.pages)
			v, err := stripe.Provider{}.FindOp(context.Background(), nil, tg, op, rec)
			assert.Equal(t, tc.kind, v.Kind, "err: %v", err)
			assert.Equal(t, tc.reads, *reads, "pages read")
			if tc.kind == idempay.KindUnknown {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}
