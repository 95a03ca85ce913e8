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

// The rules a consumer meets through FakeCharger, one test each: the
// Client's rules, since the fake is a Client over a scripted provider.

func withCard(intentID string, card idempay.Secret) idempay.ChargeRequest {
	req := idempaytest.Request(intentID, 100)
	req.Source = card
	return req
}

// attemptKey is the key the fake's client gave attempt n of an intent.
func attemptKey(t *testing.T, fake *idempaytest.FakeCharger, intentID string, n int) string {
	t.Helper()
	rec, err := fake.Record(ctx, intentID)
	require.NoError(t, err)
	if rec.Attempt == n {
		return rec.Key
	}
	for _, p := range rec.History {
		if p.Attempt == n {
			return p.Key
		}
	}
	t.Fatalf("intent %q has no attempt %d", intentID, n)
	return ""
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
			assert.Equal(t, attemptKey(t, &fake, "order-1", 1), ch.Key)
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
	assert.Equal(t, attemptKey(t, &fake, "o", 1), chargeErr(t, err).Key)

	ch, err := fake.Charge(ctx, withCard("o", "tokn_good"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, attemptKey(t, &fake, "o", 2), ch.Key)
	assert.NotEqual(t, attemptKey(t, &fake, "o", 1), ch.Key)
	assert.False(t, ch.Replayed)

	rec, err := fake.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, 2, rec.Attempt)
	assert.Equal(t, ch.ID, rec.ProviderRef)
	require.Len(t, rec.History, 1)
	assert.Equal(t, 1, rec.History[0].Attempt)
	assert.Equal(t, attemptKey(t, &fake, "o", 1), rec.History[0].Key)
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
	assert.Equal(t, []string{"fake", "invalid_request_error", "parameter_invalid", "amount_jpy", "amount_jpy is invalid (scripted)"},
		[]string{apiErr.Provider, apiErr.Type, apiErr.Code, apiErr.Param, apiErr.Message})
	assert.Equal(t, 400, apiErr.Status)
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
	assert.Equal(t, []string{attemptKey(t, &fake, "o", 1), attemptKey(t, &fake, "o", 2)}, keys)
	assert.Equal(t, attemptKey(t, &fake, "o", 3), ch.Key)
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
		assert.Equal(t, attemptKey(t, &fake, "o", 1), chargeErr(t, err).Key)
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
			assert.Equal(t, attemptKey(t, &fake, "o", 1), ce.Key, "the open attempt's key")
			assert.Zero(t, ce.Requests)

			_, err = fake.Charge(ctx, req)
			require.ErrorIs(t, err, idempay.ErrDeclined, "the step waited for the attempt's own parameters")
			assert.Equal(t, attemptKey(t, &fake, "o", 1), chargeErr(t, err).Key)
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
	assert.Equal(t, attemptKey(t, &fake, "o", 1), ch.Key)
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
	assert.JSONEq(t, `{"order_id":"o","charge_id":"`+idempaytest.FakeChargeID("o")+`","status":"pending","amount":100,`+
		`"currency":"JPY","authorize_url":"https://3ds.example/o"}`, string(ch.Raw), "Raw is the provider's answer")
	ch.Raw = nil
	assert.Equal(t, idempay.Charge{IntentID: "o", Key: attemptKey(t, &fake, "o", 1), ID: idempaytest.FakeChargeID("o"),
		Status: "pending", State: idempay.StatePending, Amount: 100, Currency: "JPY", Requests: 1, Attempt: 1,
		AuthorizeURL: "https://3ds.example/o"}, *ch)
	ce := chargeErr(t, err)
	assert.Equal(t, idempay.ChargeError{IntentID: "o", Key: ch.Key, Outcome: idempay.OutcomePending, Requests: 1,
		Err: idempay.ErrPending}, *ce)

	again, err := fake.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrPending, "still pending: nothing settled it")
	assert.Equal(t, idempay.ReplayFromLookup, again.ReplayedFrom, "the Client asked the provider")
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
	assert.Equal(t, attemptKey(t, &fake, "o", 1), ce.Key)
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
	assert.Equal(t, attemptKey(t, &fake, "o", 1), rec.Key)
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

// The one Fault scripts the fake as it scripts the servers: a Post fault
// charges and loses the answer, and the resume under the same key is
// answered by the provider's replay; a Pre fault charges nothing.
func TestFakeChargerFaultThenSuccess(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("post").Fault(idempaytest.Post)
	fake.OnIntent("pre").Fault(idempaytest.Pre).Succeed()
	req := idempaytest.Request("post", 100)

	_, err := fake.Charge(ctx, req)
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.True(t, ch.Replayed)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom, "the provider's stored answer")
	sent := fake.Sent("post")
	require.Len(t, sent, 2)
	assert.Equal(t, sent[0].Key, sent[1].Key, "resumed under the same key")

	_, err = fake.Charge(ctx, idempaytest.Request("pre", 100))
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	ch, err = fake.Charge(ctx, idempaytest.Request("pre", 100))
	require.NoError(t, err)
	assert.False(t, ch.Replayed, "nothing was charged before")

	// A lost answer, a 500 or a 503 on the last request the client may
	// send: the client cannot tell that nothing moved.
	for _, f := range []idempaytest.Fault{idempaytest.Mid, idempaytest.Internal, idempaytest.Unavailable} {
		id := "fault-" + f.String()
		fake.OnIntent(id).Fault(f)
		_, err := fake.Charge(ctx, idempaytest.Request(id, 100))
		assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "%s: %v", f, err)
		ch, err := fake.Charge(ctx, idempaytest.Request(id, 100))
		if assert.NoError(t, err, f) {
			assert.False(t, ch.Replayed, "%s charged nothing", f)
		}
	}
}
