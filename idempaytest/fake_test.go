package idempaytest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// The zero value works, and answers with a stable synthetic success.
func TestFakeChargerDefaultsToAStableSuccess(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	req := idempaytest.Request("order-1", 1500)

	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	ch.Raw = nil // the provider's answer
	assert.Equal(t, idempay.Charge{IntentID: "order-1", Key: attemptKey(t, &fake, "order-1", 1),
		ID: idempaytest.FakeChargeID("order-1"), Status: "succeeded", State: idempay.StateSucceeded,
		Amount: 1500, Currency: "JPY", Requests: 1, Attempt: 1}, *ch)
	assert.Equal(t, idempaytest.FakeChargeID("order-1"), idempaytest.FakeChargeID("order-1"))
	assert.NotEqual(t, idempaytest.FakeChargeID("order-1"), idempaytest.FakeChargeID("order-2"))
	require.NoError(t, idempay.ValidateKey(attemptKey(t, &fake, "order-1", 1)))
}

// A second call for a settled intent is answered as from the store.
func TestFakeChargerReplaysASettledSuccess(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	req := idempaytest.Request("order-1", 1500)
	first, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	first.ID = "changed by the caller" // the fake keeps its own copy

	again, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Zero(t, again.Requests)
	assert.Equal(t, idempaytest.FakeChargeID("order-1"), again.ID)
	assert.Equal(t, attemptKey(t, &fake, "order-1", 1), again.Key)
}

func TestFakeChargerKeepsTheRequestKey(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	req := idempaytest.Request("order-1", 1500)
	req.Key = "frontend-key-1"
	ch, err := fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "frontend-key-1", ch.Key)

	req.Key = "" // no key: the intent's key is used, as by the Client
	ch, err = fake.Charge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "frontend-key-1", ch.Key)
}

// Steps are spent in order by the calls that send; Unreachable fails the
// attempt, so what comes after it belongs to attempt 2, with a new key.
func TestFakeChargerScriptRunsInOrderThenReplays(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Unreachable().Unknown().InProgress()
	fake.OnIntent("order-1").Succeed() // appends
	req := idempaytest.Request("order-1", 100)

	want := []idempay.Outcome{idempay.OutcomeFailed, idempay.OutcomeUnknown, idempay.OutcomeUnknown,
		idempay.OutcomeSucceeded, idempay.OutcomeSucceeded}
	var got []idempay.Outcome
	var keys []string
	var last *idempay.Charge
	for range want {
		ch, err := fake.Charge(ctx, req)
		got = append(got, idempay.OutcomeOf(err))
		var ce *idempay.ChargeError
		if errors.As(err, &ce) {
			keys = append(keys, ce.Key)
		} else {
			keys = append(keys, ch.Key)
			last = ch
		}
	}
	assert.Equal(t, want, got)
	k1, k2 := attemptKey(t, &fake, "order-1", 1), attemptKey(t, &fake, "order-1", 2)
	assert.Equal(t, []string{k1, k2, k2, k2, k2}, keys)
	assert.Equal(t, idempay.ReplayFromStore, last.ReplayedFrom)
	assert.Equal(t, 2, last.Attempt)
}

func TestFakeChargerSucceedWith(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").SucceedWith(idempay.Charge{ID: "ch_given", Key: "ignored", Attempt: 7, RequestID: "req_1"})
	fake.OnIntent("order-2").SucceedWith(idempay.Charge{Replayed: true, ReplayedFrom: idempay.ReplayFromServer})

	ch, err := fake.Charge(ctx, idempaytest.Request("order-1", 100))
	require.NoError(t, err)
	ch.Raw = nil
	assert.Equal(t, idempay.Charge{IntentID: "order-1", Key: attemptKey(t, &fake, "order-1", 1), ID: "ch_given",
		Status: "succeeded", State: idempay.StateSucceeded, Amount: 100, Currency: "JPY", Requests: 1, Attempt: 1,
		RequestID: "req_1"}, *ch, "the key and the attempt are always the intent's")

	ch, err = fake.Charge(ctx, idempaytest.Request("order-2", 100))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
	assert.Equal(t, 1, ch.Requests)
}

// A charge in state pending, scripted as a success the way tests did before
// pending was an outcome, is answered as pending: never as paid.
func TestFakeChargerSucceedWithPendingIsPending(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").SucceedWith(idempay.Charge{ID: "ch_3ds", State: idempay.StatePending,
		AuthorizeURL: "https://3ds.example/x"})
	ch, err := fake.Charge(ctx, idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	ch.Raw = nil
	assert.Equal(t, idempay.Charge{IntentID: "order-1", Key: attemptKey(t, &fake, "order-1", 1), ID: "ch_3ds",
		Status: "pending", State: idempay.StatePending, Amount: 100, Currency: "JPY", Requests: 1, Attempt: 1,
		AuthorizeURL: "https://3ds.example/x"}, *ch)

	assert.PanicsWithValue(t, `idempaytest: OnIntent("order-2").SucceedWith: a charge in state "failed" is not a success`,
		func() { fake.OnIntent("order-2").SucceedWith(idempay.Charge{State: idempay.StateFailed}) })
}

// A decline settles the intent: later calls get the same decline, sent
// by nobody (Requests 0), as from the Client's store.
func TestFakeChargerReplaysADecline(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Decline("insufficient_funds")
	req := idempaytest.Request("order-1", 100)

	for i, attempts := range []int{1, 0, 0} {
		_, err := fake.Charge(ctx, req)
		require.ErrorIs(t, err, idempay.ErrDeclined, "call %d", i)
		var ce *idempay.ChargeError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, attempts, ce.Requests)
		var apiErr *idempay.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "insufficient_funds", apiErr.DeclineCode)
	}
}

// Invalid input is refused before anything is remembered: the scripted
// refusal and a real validation error both leave the intent free.
func TestFakeChargerInvalidRemembersNothing(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Invalid("Source")

	_, err := fake.Charge(ctx, idempaytest.Request("order-1", 100))
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Source", ve.Field)
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest)

	bad := idempaytest.Request("order-1", -5)
	_, err = fake.Charge(ctx, bad)
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Amount", ve.Field)

	ch, err := fake.Charge(ctx, idempaytest.Request("order-1", 300))
	require.NoError(t, err, "the first valid request fixes the parameters")
	assert.EqualValues(t, 300, ch.Amount)
}

func TestFakeChargerCanceledContextRemembersNothing(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := fake.Charge(canceled, idempaytest.Request("order-1", 100))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	var ce *idempay.ChargeError
	require.ErrorAs(t, err, &ce)
	assert.Empty(t, ce.Key, "the intent was not looked up: no key is known")

	_, err = fake.Charge(ctx, idempaytest.Request("order-1", 200))
	require.NoError(t, err)
}

func TestFakeChargerRefusesANilContext(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	_, err := fake.Charge(nil, idempaytest.Request("order-1", 100)) //nolint:staticcheck // a nil context is the bad input
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "ctx", ve.Field)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	_, err = fake.Record(ctx, "order-1")
	assert.ErrorIs(t, err, idempay.ErrNotFound, "nothing remembered")
}

func TestFakeChargerTransportErrorsLookReal(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("lost").Unknown()
	fake.OnIntent("refused").Unreachable()
	_, err := fake.Charge(ctx, idempaytest.Request("lost", 100))
	assert.ErrorIs(t, err, io.EOF)
	_, err = fake.Charge(ctx, idempaytest.Request("refused", 100))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestFakeChargerRecordsCalls(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("b").Decline("x")
	req := idempaytest.Request("a", 100)
	req.Metadata = map[string]string{"k": "v"}
	_, _ = fake.Charge(ctx, req)
	_, _ = fake.Charge(ctx, idempaytest.Request("b", 100))
	_, _ = fake.Charge(ctx, req)
	req.Metadata["k"] = "changed after the call"

	calls := fake.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, "v", calls[0].Request.Metadata["k"], "the recorded request is a copy")
	assert.NotNil(t, calls[0].Charge)
	assert.ErrorIs(t, calls[1].Err, idempay.ErrDeclined)
	assert.True(t, calls[2].Charge.Replayed)
	assert.Len(t, fake.CallsFor("a"), 2)
	assert.Len(t, fake.CallsFor("b"), 1)
	assert.Empty(t, fake.CallsFor("c"))

	calls[0].Charge.ID = "mutated"
	assert.NotEqual(t, "mutated", fake.Calls()[0].Charge.ID)
}

// Many goroutines charging the same intents: one request per intent on
// the wire, one charge ID whoever asked, and every call recorded.
func TestFakeChargerConcurrentCalls(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	const intents, callers = 5, 20
	var wg sync.WaitGroup
	for i := range intents * callers {
		id := i % intents
		wg.Go(func() {
			fake.OnIntent(fmt.Sprint("script-", id)).Unknown() // scripting races with charging
			ch, err := fake.Charge(ctx, idempaytest.Request(fmt.Sprint("order-", id), 100))
			if assert.NoError(t, err) {
				assert.Equal(t, idempaytest.FakeChargeID(fmt.Sprint("order-", id)), ch.ID)
			}
		})
	}
	wg.Wait()
	for id := range intents {
		assert.Len(t, fake.Sent(fmt.Sprint("order-", id)), 1, "one charge request per intent")
	}
	assert.Len(t, fake.Calls(), intents*callers)
}

// A consumer's retry code, tested against the fake: it resumes an unknown
// outcome with the same request, gives up on a decline, and never invents
// a new intent ID.
func TestFakeChargerDrivesConsumerRetryCode(t *testing.T) {
	t.Parallel()
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Unknown().Unknown()
	fake.OnIntent("order-2").Decline("insufficient_funds")

	ch, err := payWithRetry(ctx, &fake, idempaytest.Request("order-1", 100), 5)
	require.NoError(t, err)
	assert.Equal(t, idempaytest.FakeChargeID("order-1"), ch.ID)
	assert.Len(t, fake.CallsFor("order-1"), 3)

	_, err = payWithRetry(ctx, &fake, idempaytest.Request("order-2", 100), 5)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Len(t, fake.CallsFor("order-2"), 1, "a decline is final")
}

// payWithRetry stands for consumer code under test.
func payWithRetry(ctx context.Context, c idempay.Charger, req idempay.ChargeRequest, tries int) (*idempay.Charge, error) {
	var err error
	for range tries {
		var ch *idempay.Charge
		ch, err = c.Charge(ctx, req)
		if idempay.OutcomeOf(err) != idempay.OutcomeUnknown {
			return ch, err
		}
	}
	return nil, errors.Join(errors.New("still unknown"), err)
}
