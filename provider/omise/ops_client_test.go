package omise_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quickRecheck reads a charge's refunds a second time at once: the fake
// finishes every refund before it answers.
func quickRecheck(cfg *idempay.Config) { cfg.Provider = quick }

// opsSetup is setup with the quick recheck, and a charge of 150000 THB
// (an authorisation with auth) made for intent.
func opsSetup(t *testing.T, opts []omisetest.Option, intent string, auth bool) (fixture, string) {
	t.Helper()
	f := setup(t, append(opts, omisetest.WithTest(t)), quickRecheck)
	req := thb(intent, "tokn_test_"+intent)
	if auth {
		req.Extra = map[string]string{omise.ExtraCapture: "false"}
	}
	ch, err := f.client.Charge(context.Background(), req)
	if auth {
		require.ErrorIs(t, err, idempay.ErrAuthorized)
	} else {
		require.NoError(t, err)
	}
	return f, ch.ID
}

func refundOf(id, intent string, amount int64) idempay.RefundRequest {
	return idempay.RefundRequest{RefundID: id, IntentID: intent, Amount: amount, Currency: "THB"}
}

// omisePost sends a POST to the fake as someone else would (the
// dashboard, another integration): not through idempay.
func omisePost(t *testing.T, srv *omisetest.Server, path string, form url.Values) int {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.SetBasicAuth(secret, "")
	resp, err := srv.Client().Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// A refund is made once, tagged so that a lookup finds it, and asked
// again it is answered from the store.
func TestRefundSucceeds(t *testing.T) {
	f, chargeID := opsSetup(t, nil, "o1", false)
	ctx := context.Background()
	req := refundOf("o1-rf-1", "o1", 50000)
	req.Metadata = map[string]string{"ticket": "T-9"}
	op, err := f.client.Refund(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, op.State)
	assert.Equal(t, "closed", op.Status)
	assert.True(t, strings.HasPrefix(op.ID, "rfnd_"), op.ID)
	assert.Equal(t, int64(50000), op.Amount)
	assert.Equal(t, "THB", op.Currency)

	rs := f.srv.Refunds(chargeID)
	require.Len(t, rs, 1)
	assert.Equal(t, map[string]any{"idempay_op": "o1-rf-1", "idempay_intent": "o1", "idempay_namespace": ns,
		"idempay_key": op.Key, "ticket": "T-9"}, rs[0].Metadata)

	again, err := f.client.Refund(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, 1, f.srv.Stats().Ops.Requests)
	l, err := f.client.Ledger(ctx, "o1")
	require.NoError(t, err)
	assert.Equal(t, int64(50000), l.Refunded)
	assert.Equal(t, int64(100000), l.Refundable)
}

// The answer of a refund Omise made is lost: the guard finds the refund in
// the charge's refunds, and nothing is resent.
func TestRefundLostAnswerIsSettledByLookup(t *testing.T) {
	f, _ := opsSetup(t, nil, "o1", false)
	f.srv.Fail("o1-rf-1", fakes.Post)
	op, err := f.client.Refund(context.Background(), refundOf("o1-rf-1", "o1", 50000))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
	st := f.srv.Stats()
	assert.Equal(t, 1, st.Ops.Requests, "never resent")
	assert.Equal(t, 1, st.RefundLookups, "found on the first pass")
	assert.Equal(t, 1, f.srv.Ledger().OpCount("o1-rf-1"))
}

// The request was lost before Omise refunded: two passes over the
// charge's refunds find nothing, and only then is the refund resent.
func TestRefundLostRequestIsResentAfterProof(t *testing.T) {
	for _, fault := range []fakes.Fault{fakes.Pre, fakes.Mid, fakes.Unavailable, fakes.Internal} {
		t.Run(fault.String(), func(t *testing.T) {
			f, _ := opsSetup(t, nil, "o1", false)
			f.srv.Fail("o1-rf-1", fault)
			op, err := f.client.Refund(context.Background(), refundOf("o1-rf-1", "o1", 50000))
			require.NoError(t, err)
			assert.Equal(t, 2, op.Requests)
			assert.False(t, op.Replayed)
			st := f.srv.Stats()
			assert.Equal(t, 2, st.Ops.Requests)
			assert.Equal(t, 2, st.RefundLookups, "two passes before the resend")
			assert.Equal(t, 1, f.srv.Ledger().OpCount("o1-rf-1"))
		})
	}
}

// A lookup that fails proves nothing: the refund is not resent and stays
// unknown (its amount held) until a lookup answers.
func TestRefundLookupFailureNeverResends(t *testing.T) {
	for _, fault := range []fakes.Fault{fakes.Pre, fakes.Post} {
		t.Run(fault.String(), func(t *testing.T) {
			f, _ := opsSetup(t, []omisetest.Option{omisetest.WithLookupFailures(1)}, "o1", false)
			ctx := context.Background()
			f.srv.Fail("o1-rf-1", fault)
			_, err := f.client.Refund(ctx, refundOf("o1-rf-1", "o1", 100000))
			require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
			assert.Equal(t, 1, f.srv.Stats().Ops.Requests, "not resent")
			_, err = f.client.Refund(ctx, refundOf("o1-rf-2", "o1", 50001))
			require.ErrorIs(t, err, idempay.ErrRefundExceeds, "the unknown refund holds its amount")

			require.NoError(t, f.srv.SetLookupFailures(0))
			op, err := f.client.Refund(ctx, refundOf("o1-rf-1", "o1", 100000))
			require.NoError(t, err)
			assert.Equal(t, 1, f.srv.Ledger().OpCount("o1-rf-1"))
			if fault == fakes.Post {
				assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
				assert.Equal(t, 1, f.srv.Stats().Ops.Requests, "found, never resent")
			} else {
				assert.Equal(t, 2, f.srv.Stats().Ops.Requests, "resent after the proof")
			}
		})
	}
}

// Omise's refusal of a refund on its first request is a failure, which
// frees the refund's amount; the same refusal after an earlier request
// was lost is not (that request may have refunded), and the refund stays
// unknown. Here the charge already has Omise's 15 refunds, made by
// someone else.
func TestRefundRefusalIsFailedOnlyOnAFirstRequest(t *testing.T) {
	f, chargeID := opsSetup(t, nil, "o1", false)
	ctx := context.Background()
	for i := range omise.MaxRefunds {
		require.Equal(t, 200, omisePost(t, f.srv, "/charges/"+chargeID+"/refunds", url.Values{"amount": {strconv.Itoa(100 + i)}}))
	}
	_, err := f.client.Refund(ctx, refundOf("o1-rf-16", "o1", 1000))
	require.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "failed_refund", apiErr.Code)
	l, err := f.client.Ledger(ctx, "o1")
	require.NoError(t, err)
	assert.Equal(t, int64(150000), l.Refundable, "a failed refund holds nothing")

	f.srv.Fail("o1-rf-17", fakes.Pre)
	_, err = f.client.Refund(ctx, refundOf("o1-rf-17", "o1", 1000))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "refused after a request that was lost: not proof")
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Zero(t, f.srv.Ledger().OpCount("o1-rf-17"))
}

// A pending refund holds its amount; asked again once Omise has closed
// it, it is settled by retrieving it; one that fails frees its amount.
func TestPendingRefundIsSettledByLookup(t *testing.T) {
	f, _ := opsSetup(t, []omisetest.Option{omisetest.WithPendingRefunds()}, "o1", false)
	ctx := context.Background()
	op, err := f.client.Refund(ctx, refundOf("o1-rf-1", "o1", 100000))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, op)
	assert.Equal(t, idempay.StatePending, op.State)
	l, _ := f.client.Ledger(ctx, "o1")
	assert.Equal(t, int64(100000), l.RefundsInFlight)

	require.True(t, f.srv.CompleteRefund(op.ID, true))
	done, err := f.client.Refund(ctx, refundOf("o1-rf-1", "o1", 100000))
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, done.State)
	assert.Equal(t, 1, f.srv.Stats().Ops.Requests)

	op, err = f.client.Refund(ctx, refundOf("o1-rf-2", "o1", 50000))
	require.ErrorIs(t, err, idempay.ErrPending)
	require.True(t, f.srv.CompleteRefund(op.ID, false))
	_, err = f.client.Refund(ctx, refundOf("o1-rf-2", "o1", 50000))
	require.ErrorIs(t, err, idempay.ErrDeclined, "the refund object failed")
	l, _ = f.client.Ledger(ctx, "o1")
	assert.Equal(t, int64(50000), l.Refundable)
}

// A capture whose answer was lost is found by retrieving the charge; one
// lost before Omise acted is resent once the charge shows it still
// authorised. Either way the charge answers succeeded afterwards, and
// only what was captured can be refunded.
func TestCaptureLostIsSettledByLookup(t *testing.T) {
	for _, fault := range []fakes.Fault{fakes.Post, fakes.Pre} {
		t.Run(fault.String(), func(t *testing.T) {
			f, chargeID := opsSetup(t, nil, "auth", true)
			ctx := context.Background()
			f.srv.Fail(chargeID, fault)
			op, err := f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "auth-cp", IntentID: "auth", Amount: 100000, Currency: "THB"})
			require.NoError(t, err)
			assert.Equal(t, int64(100000), op.Amount)
			if fault == fakes.Post {
				assert.Equal(t, idempay.ReplayFromLookup, op.ReplayedFrom)
				assert.Equal(t, 1, f.srv.Stats().Ops.Requests)
			} else {
				assert.Equal(t, 2, f.srv.Stats().Ops.Requests)
			}
			ch, err := f.client.Charge(ctx, thb("auth", "tokn_test_auth"))
			require.NoError(t, err)
			assert.Equal(t, int64(100000), ch.Captured)
			_, err = f.client.Refund(ctx, refundOf("auth-rf", "auth", 100001))
			require.ErrorIs(t, err, idempay.ErrRefundExceeds)
			c, _ := f.srv.Charge(chargeID)
			if assert.NotNil(t, c.CapturedAmount, "captured in part, the fake says what moved") {
				assert.Equal(t, int64(100000), *c.CapturedAmount)
			}
		})
	}
}

// A charge captured by someone else (the dashboard): Omise refuses
// idempay's capture on its first request, a failure; the authorisation
// is captured all the same, which Charge does not know.
func TestCaptureRefusedOnFirstRequestFails(t *testing.T) {
	f, chargeID := opsSetup(t, nil, "auth", true)
	require.Equal(t, 200, omisePost(t, f.srv, "/charges/"+chargeID+"/capture", nil))
	_, err := f.client.Capture(context.Background(), idempay.CaptureRequest{CaptureID: "auth-cp", IntentID: "auth", Currency: "THB"})
	require.ErrorIs(t, err, idempay.ErrInvalidRequest)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "failed_capture", apiErr.Code)
}

// A reverse releases the authorisation: the charge then answers failed
// with ErrCanceled, and cannot be captured. A lost answer is found by
// retrieving the charge.
func TestCancelReverses(t *testing.T) {
	for _, fault := range []fakes.Fault{fakes.None, fakes.Post, fakes.Mid} {
		t.Run(fault.String(), func(t *testing.T) {
			f, chargeID := opsSetup(t, nil, "auth", true)
			ctx := context.Background()
			if fault != fakes.None {
				f.srv.Fail(chargeID, fault)
			}
			op, err := f.client.Cancel(ctx, idempay.CancelRequest{CancelID: "auth-cn", IntentID: "auth"})
			require.NoError(t, err)
			assert.Equal(t, "reversed", op.Status)
			assert.Equal(t, int64(150000), op.Amount)
			// The client counted every request Omise got: net/http resent
			// none by itself (the reverse has no body; see ops.go).
			assert.Equal(t, op.Requests, f.srv.Stats().Ops.Requests)
			assert.Equal(t, map[fakes.Fault]int{fakes.None: 1, fakes.Post: 1, fakes.Mid: 2}[fault], op.Requests)
			_, err = f.client.Charge(ctx, thb("auth", "tokn_test_auth"))
			require.ErrorIs(t, err, idempay.ErrCanceled)
			assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
			_, err = f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "auth-cp", IntentID: "auth", Currency: "THB"})
			require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
			c, _ := f.srv.Charge(chargeID)
			assert.Equal(t, "reversed", c.Status)
			assert.Len(t, opsOf(f.srv, fakes.OpCancel), 1, "reversed once")
		})
	}
}

func opsOf(srv *omisetest.Server, t fakes.OpType) []fakes.Op {
	var out []fakes.Op
	for _, o := range srv.Ledger().Ops() {
		if o.Type == t {
			out = append(out, o)
		}
	}
	return out
}

// loadFails fails the KeyStore's Loads of one namespace while on, after
// letting the first one through.
type loadFails struct {
	idempay.KeyStore
	ns   string
	on   atomic.Bool
	seen atomic.Int32
}

func (s *loadFails) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if s.on.Load() && namespace == s.ns && s.seen.Add(1) > 1 {
		return idempay.Record{}, errors.New("store unreachable")
	}
	return s.KeyStore.Load(ctx, namespace, intentID)
}

// Reserve fails the reservations of the namespace while on: the ledger's
// lease, for a store error between an operation's record and its entry.
func (s *loadFails) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.on.Load() && r.Namespace == s.ns {
		return idempay.Reservation{}, errors.New("store unreachable")
	}
	return s.KeyStore.Reserve(ctx, r)
}

// Rule: Omise keeps no capture object, so a capture's lookup can only say
// "the charge is captured". A capture whose attempt never reached the
// ledger (it stopped on a store error before its first byte) is never told
// succeeded for the money another capture moved: its lookup is taken as
// "not found", and the capture then fails (simulator
// seeds 9048 and 60966, OPEN-11).
func TestCaptureNeverTakesAnotherCapturesMoney(t *testing.T) {
	clock := fakes.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	store := &loadFails{KeyStore: memstore.New(memstore.WithClock(clock.Now)), ns: ns + "/ledger"}
	f := setupStore(t, store, []omisetest.Option{omisetest.WithTest(t), omisetest.WithSettings(fakes.Settings{Clock: clock.Now})},
		quickRecheck, func(cfg *idempay.Config) { cfg.Clock = clock.Now })
	req := thb("auth", "tokn_test_auth")
	req.Extra = map[string]string{omise.ExtraCapture: "false"}
	_, err := f.client.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	ctx := context.Background()

	store.on.Store(true)
	_, err = f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp-a", IntentID: "auth", Currency: "THB"})
	require.Error(t, err)
	store.on.Store(false)
	require.Zero(t, f.srv.Stats().Ops.Requests, "capture A sent nothing")

	_, err = f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp-b", IntentID: "auth", Currency: "THB"})
	require.NoError(t, err, "capture B captures the authorisation")

	clock.Advance(25 * time.Hour) // A's key is past KeyRetention: it is settled by lookup, never resent

	_, err = f.client.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp-a", IntentID: "auth", Currency: "THB"})
	assert.NotEqual(t, idempay.OutcomeSucceeded, idempay.OutcomeOf(err), "capture B's money is not capture A's")
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "A made nothing")
	assert.Equal(t, 1, f.srv.Stats().Ops.Requests, "nothing more sent")
}
