package idempaytest_test

import (
	"context"
	"errors"
	"iter"
	"syscall"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules of FakeCharger's doc, one test each. parity_test.go checks the
// same rules against a real Client.

func withCard(intentID string, card idempay.Secret) idempay.ChargeRequest {
	req := idempaytest.Request(intentID, 100)
	req.Source = card
	return req
}

func chargeErr(t *testing.T, err error) *idempay.ChargeError {
	t.Helper()
	var ce *idempay.ChargeError
	require.ErrorAs(t, err, &ce)
	return ce
}

// A paid intent answers every later call with its success from the store,
// whatever the parameters; ParamsDiffer says they were not the paid ones.
func TestFakeChargerPaidIntentAnswersEveryCall(t *testing.T) {
	t.Parallel()
	base := idempaytest.Request("order-1", 1500)
	changes := map[string]struct {
		change func(*idempay.ChargeRequest)
		differ bool
	}{
		"amount":        {func(r *idempay.ChargeRequest) { r.Amount++ }, true},
		"source":        {func(r *idempay.ChargeRequest) { r.Source = "tokn_other" }, true},
		"customer":      {func(r *idempay.ChargeRequest) { r.Customer = "cus_1" }, true},
		"description":   {func(r *idempay.ChargeRequest) { r.Description = "other" }, true},
		"return URL":    {func(r *idempay.ChargeRequest) { r.ReturnURL = "https://x.example" }, true},
		"metadata":      {func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"a": "b"} }, true},
		"extra":         {func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"a": "b"} }, true},
		"other key":     {func(r *idempay.ChargeRequest) { r.Key = "another-key" }, false},
		"currency case": {func(r *idempay.ChargeRequest) { r.Currency = "jpy" }, false},
		"empty maps": {func(r *idempay.ChargeRequest) {
			r.Metadata, r.Extra = map[string]string{}, map[string]string{}
		}, false},
	}
	for name, tc := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var fake idempaytest.FakeCharger
			fake.OnIntent("order-1").Succeed()
			_, err := fake.Charge(ctx, base)
			require.NoError(t, err)

			req := base
			tc.change(&req)
			ch, err := fake.Charge(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, tc.differ, ch.ParamsDiffer)
			assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom)
			assert.Zero(t, ch.Requests, "nothing sent")
			assert.EqualValues(t, 1500, ch.Amount, "the paid charge, not the call's parameters")
			assert.Equal(t, idempaytest.FakeKey("order-1"), ch.Key)
			assert.Equal(t, 1, ch.Attempt)
		})
	}
}

// Decline, then another card on the same intent: a second attempt with a
// new key; the record keeps the first.
func TestFakeChargerDeclineThenAnotherCard(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Decline("insufficient_funds")

	_, err := fake.Charge(ctx, withCard("o", "tok_decline_1"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempaytest.FakeKey("o"), chargeErr(t, err).Key)

	ch, err := fake.Charge(ctx, withCard("o", "tokn_good"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, idempaytest.FakeAttemptKey("o", 2), ch.Key)
	assert.NotEqual(t, idempaytest.FakeKey("o"), ch.Key)
	assert.False(t, ch.Replayed)

	rec, err := fake.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, 2, rec.Attempt)
	assert.Equal(t, ch.ID, rec.ProviderRef)
	require.Len(t, rec.History, 1)
	assert.Equal(t, 1, rec.History[0].Attempt)
	assert.Equal(t, idempaytest.FakeKey("o"), rec.History[0].Key)
	assert.Equal(t, idempay.StateFailed, rec.History[0].State)
	assert.NotEqual(t, rec.Fingerprint, rec.History[0].Fingerprint)
	assert.False(t, rec.History[0].ClosedAt.IsZero())

	again, err := fake.Charge(ctx, withCard("o", "tok_decline_1"))
	require.NoError(t, err, "the declined card again: the paid intent answers")
	assert.True(t, again.ParamsDiffer)
	assert.Equal(t, 2, again.Attempt)
}

// The same declined (or rejected) request is answered by its refusal from
// the store, and spends no step: the next step waits for other parameters.
func TestFakeChargerSameRefusedRequestSpendsNoStep(t *testing.T) {
	t.Parallel()
	for name, script := range map[string]func(*idempaytest.IntentScript) *idempaytest.IntentScript{
		"decline": func(s *idempaytest.IntentScript) *idempaytest.IntentScript { return s.Decline("x") },
		"reject":  func(s *idempaytest.IntentScript) *idempaytest.IntentScript { return s.Reject("amount") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var fake idempaytest.FakeCharger
			script(fake.OnIntent("o")).Unknown()
			req := withCard("o", "tokn_a")
			first, err := fake.Charge(ctx, req)
			require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
			assert.Nil(t, first)
			for range 2 {
				_, again := fake.Charge(ctx, req)
				assert.Equal(t, chargeErr(t, err).Err.Error(), chargeErr(t, again).Err.Error(), "the same refusal")
				assert.Zero(t, chargeErr(t, again).Requests, "from the store")
			}
			_, err = fake.Charge(ctx, withCard("o", "tokn_b"))
			assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "the step waited for another request")
		})
	}
}

func TestFakeChargerRejectLooksLikeAProviderRefusal(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Reject("amount_jpy")
	_, err := fake.Charge(ctx, idempaytest.Request("o", 100))
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, idempay.APIError{Provider: "fake", Status: 400, Type: "invalid_request_error",
		Code: "parameter_invalid", Param: "amount_jpy", Message: "amount_jpy is invalid (scripted)"}, *apiErr)
	assert.Equal(t, 1, chargeErr(t, err).Requests)
}

// Nothing reached the provider: the same request begins the next attempt,
// with a new key.
func TestFakeChargerUnreachableBeginsANewAttempt(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Unreachable().Unreachable()
	req := idempaytest.Request("o", 100)
	var keys []string
	for range 2 {
		_, err := fake.Charge(ctx, req)
		require.ErrorIs(t, err, idempay.ErrUnreachable)
		keys = append(keys, chargeErr(t, err).Key)
	}
	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 3, ch.Attempt)
	assert.Equal(t, []string{idempaytest.FakeKey("o"), idempaytest.FakeAttemptKey("o", 2)}, keys)
	assert.Equal(t, idempaytest.FakeAttemptKey("o", 3), ch.Key)
}

// A refusal that rests on "nothing reached the provider" proves nothing
// on a resumed attempt: an earlier request with its key may have charged.
func TestFakeChargerRefusalOfAResumedAttemptIsUnknown(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Unknown().Unreachable().Reject("amount").Decline("x")
	req := idempaytest.Request("o", 100)
	for _, want := range []error{idempay.ErrOutcomeUnknown, syscall.ECONNREFUSED, idempay.ErrOutcomeUnknown} {
		_, err := fake.Charge(ctx, req)
		require.ErrorIs(t, err, want)
		assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
		assert.NotErrorIs(t, err, idempay.ErrUnreachable)
		assert.NotErrorIs(t, err, idempay.ErrInvalidRequest)
		assert.Equal(t, idempaytest.FakeKey("o"), chargeErr(t, err).Key)
	}
	_, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrDeclined, "a decline is final whatever came before")
	rec, _ := fake.Record(ctx, "o")
	assert.Equal(t, 1, rec.Attempt)
	assert.Equal(t, idempay.StateFailed, rec.State)
}

// Unknown or pending: money may still move under the attempt, so other
// parameters are refused with its outcome and key; the same parameters
// resume it.
func TestFakeChargerOpenAttemptBlocksOtherParameters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		script  func(*idempaytest.IntentScript)
		outcome idempay.Outcome
	}{
		{"unknown", func(s *idempaytest.IntentScript) { s.Unknown().Decline("x") }, idempay.OutcomeUnknown},
		{"in progress", func(s *idempaytest.IntentScript) { s.InProgress().Decline("x") }, idempay.OutcomeUnknown},
		{"pending", func(s *idempaytest.IntentScript) { s.Pending().FailPending("x") }, idempay.OutcomePending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var fake idempaytest.FakeCharger
			tc.script(fake.OnIntent("o"))
			req := withCard("o", "tokn_a")
			_, err := fake.Charge(ctx, req)
			require.Equal(t, tc.outcome, idempay.OutcomeOf(err))

			other := withCard("o", "tokn_b")
			other.Key = "frontend-key"
			ch, err := fake.Charge(ctx, other)
			if tc.outcome == idempay.OutcomePending {
				require.NotNil(t, ch, "a pending outcome comes with the pending charge")
				assert.Equal(t, idempaytest.FakeChargeID("o"), ch.ID)
			} else {
				assert.Nil(t, ch)
			}
			require.ErrorIs(t, err, idempay.ErrAttemptOpen)
			assert.Equal(t, tc.outcome, idempay.OutcomeOf(err))
			ce := chargeErr(t, err)
			assert.Equal(t, idempaytest.FakeKey("o"), ce.Key, "the open attempt's key")
			assert.Zero(t, ce.Requests)

			_, err = fake.Charge(ctx, req)
			require.ErrorIs(t, err, idempay.ErrDeclined, "the step waited for the attempt's own parameters")
			assert.Equal(t, idempaytest.FakeKey("o"), chargeErr(t, err).Key)
		})
	}
}

// A caller's key begins an attempt only; on a reserved intent the stored
// key is used.
func TestFakeChargerIgnoresTheCallerKeyOfAReservedIntent(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Unknown()
	req := idempaytest.Request("o", 100)
	_, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	req.Key = "frontend-key"
	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempaytest.FakeKey("o"), ch.Key)
}

// The key of a failed attempt cannot begin another: the provider would
// answer the failure.
func TestFakeChargerRefusesTheKeyOfAFailedAttempt(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Decline("x")
	first := withCard("o", "tokn_a")
	first.Key = "frontend-key-1"
	_, err := fake.Charge(ctx, first)
	require.ErrorIs(t, err, idempay.ErrDeclined)

	second := withCard("o", "tokn_b")
	second.Key = "frontend-key-1"
	_, err = fake.Charge(ctx, second)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Empty(t, chargeErr(t, err).Key)
	rec, _ := fake.Record(ctx, "o")
	assert.Equal(t, 1, rec.Attempt, "no attempt begun")

	second.Key = "frontend-key-2"
	ch, err := fake.Charge(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, "frontend-key-2", ch.Key)
	assert.Equal(t, 2, ch.Attempt)
}

// Pending is its own outcome: the charge comes with ErrPending, stays
// pending until the script settles it, and is never sent again.
func TestFakeChargerPendingUntilCompleted(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").PendingWith(idempay.Charge{AuthorizeURL: "https://3ds.example/o"})
	req := idempaytest.Request("o", 100)

	ch, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch)
	assert.Equal(t, idempay.Charge{IntentID: "o", Key: idempaytest.FakeKey("o"), ID: idempaytest.FakeChargeID("o"),
		Status: "pending", State: idempay.StatePending, Amount: 100, Currency: "JPY", Requests: 1, Attempt: 1,
		AuthorizeURL: "https://3ds.example/o"}, *ch)
	ce := chargeErr(t, err)
	assert.Equal(t, idempay.ChargeError{IntentID: "o", Key: ch.Key, Outcome: idempay.OutcomePending, Requests: 1,
		Err: idempay.ErrPending}, *ce)

	again, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrPending, "still pending: nothing settled it")
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Zero(t, again.Requests)
	assert.Equal(t, "https://3ds.example/o", again.AuthorizeURL)

	var open []string
	for rec, err := range fake.Unresolved(ctx) {
		require.NoError(t, err)
		open = append(open, rec.ID)
	}
	assert.Equal(t, []string{"o"}, open)

	fake.OnIntent("o").CompletePending() // the customer finished 3-D Secure
	done, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, done.State)
	assert.Equal(t, "succeeded", done.Status)
	assert.Equal(t, idempay.ReplayFromLookup, done.ReplayedFrom)
	assert.Empty(t, done.AuthorizeURL)
	assert.Equal(t, ch.ID, done.ID)
	assert.Zero(t, done.Requests)

	last, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, last.ReplayedFrom)
	for range fake.Unresolved(ctx) {
		t.Error("nothing is unresolved once the charge succeeded")
	}
}

func TestFakeChargerPendingThenFailed(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Pending().FailPending("authentication_failed")
	req := withCard("o", "tokn_3ds")
	_, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrPending)

	_, err = fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.False(t, errors.Is(err, idempay.ErrPending))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "authentication_failed", apiErr.DeclineCode)
	assert.Zero(t, chargeErr(t, err).Requests, "found by lookup: nothing sent")

	_, again := fake.Charge(ctx, req)
	assert.ErrorIs(t, again, idempay.ErrDeclined, "the same request: the decline from the store")
	ch, err := fake.Charge(ctx, withCard("o", "tokn_other"))
	require.NoError(t, err, "another card begins attempt 2")
	assert.Equal(t, 2, ch.Attempt)
	rec, _ := fake.Record(ctx, "o")
	require.Len(t, rec.History, 1)
	assert.Equal(t, idempaytest.FakeChargeID("o"), rec.History[0].ProviderRef, "the pending charge's reference is kept")
}

// A step that could never be spent where it is scripted stops the test at
// once, naming the step.
func TestFakeChargerRefusesAStepThatCanNeverBeSpent(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	assert.PanicsWithValue(t, `idempaytest: OnIntent("a").Decline: the intent has succeeded by this point of its script, `+
		`and a succeeded intent answers every later call from the store: no step after it but Invalid is ever spent`,
		func() { fake.OnIntent("a").Succeed().Decline("x") })
	assert.NotPanics(t, func() { fake.OnIntent("a").Invalid("Currency") }, "Invalid is spent before the store")
	assert.Panics(t, func() { fake.OnIntent("b").Pending().Unknown() })
	assert.Panics(t, func() { fake.OnIntent("c").CompletePending() })
	assert.Panics(t, func() { fake.OnIntent("d").Unknown().FailPending("x") })
	assert.Panics(t, func() { fake.OnIntent("e").Fail(nil) })
	assert.Panics(t, func() { fake.OnIntent("e").WaitFor(nil) })
	assert.NotPanics(t, func() { fake.OnIntent("f").Pending().WaitFor(make(chan struct{})).CompletePending() })
	assert.NotPanics(t, func() { fake.OnIntent("g").Decline("x").Unreachable().Unknown().Pending().FailPending("y").Succeed() })

	// The check reads the intent's state once the script is used up.
	_, err := fake.Charge(ctx, idempaytest.Request("h", 100))
	require.NoError(t, err)
	assert.Panics(t, func() { fake.OnIntent("h").Unknown() })
}

// WaitFor holds a flight: a caller who stops waiting is told so, with the
// key and the requests on the wire; the flight goes on, identical callers
// share its answer, other callers come after it.
func TestFakeChargerFlightOutlivesAnImpatientCaller(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	release := make(chan struct{})
	fake.OnIntent("o").WaitFor(release).SucceedWith(idempay.Charge{ID: "ch_late"})
	req := idempaytest.Request("o", 100)

	impatient, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := fake.Charge(impatient, req); errc <- err }()
	require.Eventually(t, func() bool {
		rec, err := fake.Record(ctx, "o")
		return err == nil && rec.State == idempay.StateOpen
	}, 5*time.Second, time.Millisecond, "the attempt is reserved while the flight is held")

	type result struct {
		ch  *idempay.Charge
		err error
	}
	joined, after := make(chan result, 1), make(chan result, 1)
	go func() { ch, err := fake.Charge(ctx, req); joined <- result{ch, err} }()
	other := idempaytest.Request("o", 999)
	go func() { ch, err := fake.Charge(ctx, other); after <- result{ch, err} }()

	cancel()
	err := <-errc
	assert.ErrorIs(t, err, idempay.ErrStoppedWaiting)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	ce := chargeErr(t, err)
	assert.Equal(t, idempaytest.FakeKey("o"), ce.Key)
	assert.Equal(t, 1, ce.Requests)

	select {
	case r := <-joined:
		t.Fatalf("a joined caller returned before the flight ended: %v", r.err)
	case r := <-after:
		t.Fatalf("a caller with other parameters returned before the flight ended: %v", r.err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	j := <-joined
	require.NoError(t, j.err)
	assert.Equal(t, "ch_late", j.ch.ID)
	assert.False(t, j.ch.Replayed, "joined the flight: its fresh answer")
	a := <-after
	require.NoError(t, a.err)
	assert.True(t, a.ch.ParamsDiffer, "came after the flight: the paid intent answers")

	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom)
	assert.Len(t, fake.CallsFor("o"), 4)
}

// A caller waiting behind another flight of the intent, who stops
// waiting, knows no key yet.
func TestFakeChargerStopsWaitingBehindAnotherFlight(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	release := make(chan struct{})
	defer close(release)
	fake.OnIntent("o").WaitFor(release)
	go fake.Charge(ctx, idempaytest.Request("o", 100))
	require.Eventually(t, func() bool { _, err := fake.Record(ctx, "o"); return err == nil }, 5*time.Second, time.Millisecond)

	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err := fake.Charge(short, idempaytest.Request("o", 200))
	require.ErrorIs(t, err, idempay.ErrStoppedWaiting)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, chargeErr(t, err).Key)
}

func TestFakeChargerRecord(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	_, err := fake.Record(ctx, "o")
	require.ErrorIs(t, err, idempay.ErrNotFound)
	fake.OnIntent("o").Unknown()
	req := idempaytest.Request("o", 100)
	_, _ = fake.Charge(ctx, req)
	rec, err := fake.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, "o", rec.ID)
	assert.Equal(t, 1, rec.Attempt)
	assert.Equal(t, idempaytest.FakeKey("o"), rec.Key)
	assert.Equal(t, idempay.StateOpen, rec.State)
	assert.NotEmpty(t, rec.Fingerprint)
	assert.False(t, rec.CreatedAt.IsZero())
	assert.True(t, rec.ClosedAt.IsZero())

	rec.History = append(rec.History, idempay.PastAttempt{}) // a copy
	again, _ := fake.Record(ctx, "o")
	assert.Empty(t, again.History)
}

// Code that takes Charge, Record and Unresolved can be given the fake or a
// Client.
func TestFakeChargerHasTheClientsReadMethods(t *testing.T) {
	t.Parallel()
	type payments interface {
		idempay.Charger
		Record(context.Context, string) (idempay.Record, error)
		Unresolved(context.Context) iter.Seq2[idempay.Record, error]
	}
	var _ payments = (*idempay.Client)(nil)
	var _ payments = (*idempaytest.FakeCharger)(nil)
}

// A caller's BaseKey names one action across its attempts, as in the
// Client: attempt 1 under the key itself, the attempt after an outage
// under idempay.AttemptKey(key, 2).
func TestFakeChargerDerivesTheAttemptKeyOfABaseKey(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("o").Unreachable().Succeed()
	req := idempaytest.Request("o", 100)
	req.BaseKey = "frontend-key-1"
	_, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrUnreachable)
	rec, _ := fake.Record(ctx, "o")
	assert.Equal(t, "frontend-key-1", rec.Key)
	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, idempay.AttemptKey("frontend-key-1", 2), ch.Key)
}
