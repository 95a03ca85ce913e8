package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opErr is the *OpError of err, asserting its outcome.
func opErr(t *testing.T, err error, want idempay.Outcome) *idempay.OpError {
	t.Helper()
	var oe *idempay.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, want, idempay.OutcomeOf(err), "%v", err)
	return oe
}

// Rule: the refunds of an intent, summed, never exceed what was charged:
// a refund that would is refused before anything is sent, with an
// *AmountError saying what is left; nothing reaches the server.
func TestRefundBeyondTheChargeIsRefused(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true}) // the server would refund anything
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	ctx := context.Background()

	_, err := c.Refund(ctx, refundOf("o", "rf-all", 1501))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds)
	var ae *idempay.AmountError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, int64(1500), ae.Available)
	oe := opErr(t, err, idempay.OutcomeFailed)
	assert.Equal(t, "rf-all", oe.OpID)
	assert.Equal(t, "o", oe.IntentID)

	_, err = c.Refund(ctx, refundOf("o", "rf-1", 1000))
	require.NoError(t, err)
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 600))
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, int64(500), ae.Available, "what rf-1 left")
	_, err = c.Refund(ctx, refundOf("o", "rf-3", 500))
	require.NoError(t, err, "the rest, exactly")
	assert.Zero(t, s.requests("rf-all")+s.requests("rf-2"), "the refused refunds sent nothing")
	assert.Equal(t, int64(1500), s.Ops().Refunded("o"))
	require.NoError(t, s.Ops().Check())
}

// Rule: a refund whose outcome is unknown, or pending, may still move
// money: it counts against what is left until it settles.
func TestUnsettledRefundsCount(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   []step
		outcome idempay.Outcome
	}{
		{"unknown", []step{drop, drop}, idempay.OutcomeUnknown},
		{"pending", []step{opAnswer(202, "re_p", "pending", 1000)}, idempay.OutcomePending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := opsStore(t)
			s := startOps(t, store, refserver.Config{Lenient: true})
			c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
			charged(t, c, "o", 1500, false)
			s.answer("rf-1", tc.first...)
			_, err := c.Refund(context.Background(), refundOf("o", "rf-1", 1000))
			opErr(t, err, tc.outcome)

			_, err = c.Refund(context.Background(), refundOf("o", "rf-2", 600))
			require.ErrorIs(t, err, idempay.ErrRefundExceeds, "rf-1's 1000 counts")
			l, err := c.Ledger(context.Background(), "o")
			require.NoError(t, err)
			assert.Equal(t, int64(1000), l.RefundsInFlight)
			assert.Equal(t, int64(500), l.Refundable)
			assert.Equal(t, tc.outcome, l.Ops[0].Outcome())
		})
	}
}

// Rule: a refund that definitely failed moved no money and frees its
// amount; a refund refused here because of it is tried afresh, as a new
// attempt, once the amount is free.
func TestFailedRefundFreesItsAmount(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()

	s.answer("rf-1", drop) // lost: unknown
	_, err := c.Refund(ctx, refundOf("o", "rf-1", 1500))
	opErr(t, err, idempay.OutcomeUnknown)
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 1500))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds)

	// rf-1 again: the provider declines it for good. Its 1500 is free.
	s.answer("rf-1", status(http.StatusPaymentRequired, `{"error":{"type":"card_error","code":"refund_declined"}}`))
	_, err = c.Refund(ctx, refundOf("o", "rf-1", 1500))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	opErr(t, err, idempay.OutcomeFailed)

	op, err := c.Refund(ctx, refundOf("o", "rf-2", 1500))
	require.NoError(t, err, "the same request, refused before, is admitted now")
	assert.Equal(t, 2, op.Attempt, "as a second attempt of rf-2, with a new key")
	rec, err := recordOf(t, store, idempay.OpRefund, "rf-2")
	require.NoError(t, err)
	require.Len(t, rec.History, 1)
	assert.NotEqual(t, rec.History[0].Key, rec.Key)
	l, err := c.Ledger(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), l.Refunded)
	assert.Zero(t, l.Refundable)
	require.NoError(t, s.Ops().Check())
}

// Rule: only a settled successful charge can be refunded, captured or
// cancelled; anything else is refused before anything is stored.
func TestOperationsOfAnIntentNotSucceededAreRefused(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	ctx := context.Background()
	s.InjectOrder("unknown", refserver.Pre)
	_, err := c.Charge(ctx, order("unknown"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	declined := order("declined")
	declined.Source = refserver.DeclineTokenPrefix + "_x"
	_, err = c.Charge(ctx, declined)
	require.ErrorIs(t, err, idempay.ErrDeclined)

	for _, intent := range []string{"never", "unknown", "declined"} {
		_, err := c.Refund(ctx, refundOf(intent, "rf-"+intent, 100))
		require.ErrorIs(t, err, idempay.ErrChargeNotSucceeded, intent)
		opErr(t, err, idempay.OutcomeFailed)
		_, err = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp-" + intent, IntentID: intent, Currency: "JPY"})
		require.ErrorIs(t, err, idempay.ErrChargeNotSucceeded, intent)
		_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-" + intent, IntentID: intent})
		require.ErrorIs(t, err, idempay.ErrChargeNotSucceeded, intent)
		for op, id := range map[idempay.OpType]string{idempay.OpRefund: "rf-", idempay.OpCapture: "cp-", idempay.OpCancel: "cn-"} {
			_, err := recordOf(t, store, op, id+intent)
			assert.ErrorIs(t, err, idempay.ErrNotFound, "nothing stored for %s%s", id, intent)
		}
	}
	assert.Zero(t, s.Stats().Ops.Requests)
}

// Rule: a refund in another currency than the charge's is bad input,
// refused with a *ValidationError before anything is stored.
func TestRefundInAnotherCurrencyIsRefused(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	req := refundOf("o", "rf-usd", 100)
	req.Currency = "usd"
	_, err := c.Refund(context.Background(), req)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Currency", ve.Field)
	opErr(t, err, idempay.OutcomeFailed)
	_, err = recordOf(t, store, idempay.OpRefund, "rf-usd")
	assert.ErrorIs(t, err, idempay.ErrNotFound)
}

// Rule: an operation ID names one operation. Used again with other
// parameters, a settled one answers its own result (ParamsDiffer) and an
// unsettled one is refused, with nothing sent.
func TestOperationIDReusedWithOtherParameters(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()

	first, err := c.Refund(ctx, refundOf("o", "rf-1", 500))
	require.NoError(t, err)
	other, err := c.Refund(ctx, refundOf("o", "rf-1", 700))
	require.NoError(t, err)
	assert.True(t, other.ParamsDiffer)
	assert.Equal(t, first.ID, other.ID)
	assert.Equal(t, int64(500), other.Amount, "the refund that was made")

	s.answer("rf-2", drop)
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 300))
	opErr(t, err, idempay.OutcomeUnknown)
	sent := s.requests("rf-2")
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 400))
	require.ErrorIs(t, err, idempay.ErrAttemptOpen)
	opErr(t, err, idempay.OutcomeUnknown)
	assert.Equal(t, sent, s.requests("rf-2"), "nothing sent")
	assert.Equal(t, 1, s.Ops().Count("rf-1"))
}

// Rule: every field of an operation is checked before anything is stored
// or sent; a bad one is a *ValidationError naming it.
func TestBadOperationInputIsRefused(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	long := strings.Repeat("x", 256)
	refunds := map[string]struct {
		field string
		edit  func(*idempay.RefundRequest)
	}{
		"empty refund ID":       {"RefundID", func(r *idempay.RefundRequest) { r.RefundID = "" }},
		"refund ID too long":    {"RefundID", func(r *idempay.RefundRequest) { r.RefundID = long }},
		"refund ID with space":  {"RefundID", func(r *idempay.RefundRequest) { r.RefundID = " rf" }},
		"refund ID control":     {"RefundID", func(r *idempay.RefundRequest) { r.RefundID = "rf\n1" }},
		"empty intent ID":       {"IntentID", func(r *idempay.RefundRequest) { r.IntentID = "" }},
		"zero amount":           {"Amount", func(r *idempay.RefundRequest) { r.Amount = 0 }},
		"negative amount":       {"Amount", func(r *idempay.RefundRequest) { r.Amount = -1 }},
		"amount past 2^53":      {"Amount", func(r *idempay.RefundRequest) { r.Amount = idempay.MaxAmount + 1 }},
		"no currency":           {"Currency", func(r *idempay.RefundRequest) { r.Currency = "" }},
		"unknown currency":      {"Currency", func(r *idempay.RefundRequest) { r.Currency = "ABC" }},
		"reason too long":       {"Reason", func(r *idempay.RefundRequest) { r.Reason = strings.Repeat("r", 501) }},
		"reason control":        {"Reason", func(r *idempay.RefundRequest) { r.Reason = "a\x1bb" }},
		"metadata reserved":     {"Metadata", func(r *idempay.RefundRequest) { r.Metadata = map[string]string{"idempay_op": "x"} }},
		"metadata control":      {"Metadata", func(r *idempay.RefundRequest) { r.Metadata = map[string]string{"k": "\x00"} }},
		"key with a space":      {"Key", func(r *idempay.RefundRequest) { r.Key = "a b" }},
		"key over 255":          {"Key", func(r *idempay.RefundRequest) { r.Key = long }},
		"key control character": {"Key", func(r *idempay.RefundRequest) { r.Key = "k\x00" }},
	}
	for name, tc := range refunds {
		t.Run("refund "+name, func(t *testing.T) {
			req := refundOf("o", "rf-bad", 100)
			tc.edit(&req)
			_, err := c.Refund(context.Background(), req)
			var ve *idempay.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Field)
			assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
			assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
		})
	}
	captures := map[string]struct {
		field string
		req   idempay.CaptureRequest
	}{
		"no capture ID":    {"CaptureID", idempay.CaptureRequest{IntentID: "o", Currency: "JPY"}},
		"no intent":        {"IntentID", idempay.CaptureRequest{CaptureID: "cp", Currency: "JPY"}},
		"negative amount":  {"Amount", idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Amount: -5, Currency: "JPY"}},
		"no currency":      {"Currency", idempay.CaptureRequest{CaptureID: "cp", IntentID: "o"}},
		"metadata control": {"Metadata", idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY", Metadata: map[string]string{"\x00": "v"}}},
	}
	for name, tc := range captures {
		t.Run("capture "+name, func(t *testing.T) {
			_, err := c.Capture(context.Background(), tc.req)
			var ve *idempay.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Field)
		})
	}
	cancels := map[string]struct {
		field string
		req   idempay.CancelRequest
	}{
		"no cancel ID":  {"CancelID", idempay.CancelRequest{IntentID: "o"}},
		"no intent":     {"IntentID", idempay.CancelRequest{CancelID: "cn"}},
		"reason blank":  {"Reason", idempay.CancelRequest{CancelID: "cn", IntentID: "o", Reason: "   "}},
		"key too long":  {"Key", idempay.CancelRequest{CancelID: "cn", IntentID: "o", Key: long}},
		"nested intent": {"IntentID", idempay.CancelRequest{CancelID: "cn", IntentID: "o\t"}},
	}
	for name, tc := range cancels {
		t.Run("cancel "+name, func(t *testing.T) {
			_, err := c.Cancel(context.Background(), tc.req)
			var ve *idempay.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Field)
		})
	}
	_, err := c.Refund(nil, refundOf("o", "rf", 1)) //nolint:staticcheck // the nil context is the bad input
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Zero(t, s.Stats().Ops.Requests, "nothing sent")
	for _, id := range []string{"rf-bad", "rf"} {
		_, err := recordOf(t, store, idempay.OpRefund, id)
		assert.ErrorIs(t, err, idempay.ErrNotFound, "nothing stored")
	}
}

// chargeOnly is a provider with charges and nothing else.
type chargeOnly struct{ p idempay.OwnAPI }

func (c chargeOnly) Name() string                           { return c.p.Name() }
func (c chargeOnly) Validate(r idempay.ChargeRequest) error { return c.p.Validate(r) }
func (c chargeOnly) ReadCharge(r *http.Response, b []byte) idempay.Verdict {
	return c.p.ReadCharge(r, b)
}
func (c chargeOnly) NewChargeRequest(ctx context.Context, t idempay.Target, r idempay.ChargeRequest, key string) (*http.Request, error) {
	return c.p.NewChargeRequest(ctx, t, r, key)
}

// Rule: a provider without a capability gets ErrNotSupported, before
// anything is validated against the store or stored.
func TestOperationNotSupportedByTheProvider(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := newClient(t, s.URL, store, func(cfg *idempay.Config) { cfg.Provider = chargeOnly{} })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	_, err := c.Refund(ctx, refundOf("o", "rf", 100))
	require.ErrorIs(t, err, idempay.ErrNotSupported)
	opErr(t, err, idempay.OutcomeFailed)
	_, err = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp", IntentID: "o", Currency: "JPY"})
	require.ErrorIs(t, err, idempay.ErrNotSupported)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn", IntentID: "o"})
	require.ErrorIs(t, err, idempay.ErrNotSupported)
	for _, op := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		for rec, err := range c.UnresolvedOps(ctx, op) {
			t.Errorf("stored %v %v", rec, err)
		}
	}
	l, err := c.Ledger(ctx, "o")
	require.NoError(t, err, "the ledger holds the charge from its success on")
	assert.Empty(t, l.Ops, "and no operation")
	assert.Zero(t, s.Stats().Ops.Requests)
}

// refundsOnly makes refunds and nothing else, and refuses a refund the way
// a provider not set up for them does: with an error that is not a
// *ValidationError.
type refundsOnly struct {
	idempay.OwnAPI
	unset bool
}

func (refundsOnly) Operates(t idempay.OpType) (makes, finds bool) {
	return t == idempay.OpRefund, false
}
func (p refundsOnly) ValidateOp(op idempay.OpRequest) error {
	if p.unset {
		return fmt.Errorf("%w: refunds are not set up", idempay.ErrNotSupported)
	}
	return errors.New("adapter: cannot send this refund")
}

// Rule: what the adapter refuses before anything is stored is an
// *OpError, outcome failed (nothing was sent), whatever error the adapter
// returned; a type the adapter does not make is ErrNotSupported, outcome
// failed, while its other types go on to its ValidateOp.
func TestAdapterRefusalIsFailedOpError(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	ctx := context.Background()
	for _, unset := range []bool{false, true} {
		c := newClient(t, s.URL, store, func(cfg *idempay.Config) { cfg.Provider = refundsOnly{unset: unset} })
		charged(t, c, fmt.Sprint("o-", unset), 1500, true)
		_, err := c.Refund(ctx, refundOf(fmt.Sprint("o-", unset), "rf", 100))
		e := opErr(t, err, idempay.OutcomeFailed)
		assert.Equal(t, idempay.OpRefund, e.Type)
		assert.Equal(t, unset, errors.Is(err, idempay.ErrNotSupported))
		_, err = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cp", IntentID: fmt.Sprint("o-", unset), Currency: "JPY"})
		require.ErrorIs(t, err, idempay.ErrNotSupported)
		opErr(t, err, idempay.OutcomeFailed)
		_, err = c.SettleCancel(ctx, idempay.CancelRequest{CancelID: "cn", IntentID: fmt.Sprint("o-", unset)})
		require.ErrorIs(t, err, idempay.ErrNotSupported)
		opErr(t, err, idempay.OutcomeUnknown)
	}
	for _, op := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		for rec, err := range newClient(t, s.URL, store).UnresolvedOps(ctx, op) {
			t.Errorf("stored %v %v", rec, err)
		}
	}
	assert.Zero(t, s.Stats().Ops.Requests)
}

// Rule: a ledger entry stands for one attempt, and a caller's key names one
// attempt: after a first attempt that never reached the provider (429
// every time), the same key is refused, and a second attempt under a new
// key, with another amount, is checked and entered afresh, never let
// through on the first one's entry.
func TestANewRefundAttemptIsCheckedAfresh(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	first := refundOf("o", "rf-1", 100)
	first.Key = "frontend-refund-key"
	s.answer("rf-1", status(429, `{}`), status(429, `{}`))
	_, err := c.Refund(ctx, first)
	require.ErrorIs(t, err, idempay.ErrUnreachable)
	opErr(t, err, idempay.OutcomeFailed)

	_, err = c.Refund(ctx, refundOf("o", "rf-2", 1000))
	require.NoError(t, err)
	sent := s.Stats().Ops.Requests
	_, err = c.Refund(ctx, first)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve, "the failed attempt's key names it for good")
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, sent, s.Stats().Ops.Requests)

	second := first
	second.Key = "frontend-refund-key-2"
	second.Amount = 600 // more than the 500 left
	_, err = c.Refund(ctx, second)
	require.ErrorIs(t, err, idempay.ErrRefundExceeds)
	second.Amount = 500 // that refusal was attempt 2's answer: attempt 3, another key
	second.Key = "frontend-refund-key-3"
	op, err := c.Refund(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, "frontend-refund-key-3", op.Key)
	assert.Equal(t, int64(1500), s.Ops().Refunded("o"))
	require.NoError(t, s.Ops().Check())
}
