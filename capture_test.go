package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paid is what a caller who switches on the outcome alone does: ship.
func paid(err error) bool { return idempay.OutcomeOf(err) == idempay.OutcomeSucceeded }

func capture(id, intent string, amount int64) idempay.CaptureRequest {
	return idempay.CaptureRequest{CaptureID: id, IntentID: intent, Amount: amount, Currency: "JPY"}
}

// Rule: an authorisation has moved no money: Charge answers it pending
// (ErrAuthorized), so a caller who switches on OutcomeOf never ships it as
// paid; once captured, in part, it is a success of what was captured, and
// only that may be refunded.
func TestAuthorisationIsPendingUntilCaptured(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true})
	c := opsClient(t, s, store)
	ctx := context.Background()
	req := order("o")
	req.Extra = map[string]string{"capture": "false"}

	ch, err := c.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrAuthorized)
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.False(t, paid(err), "an uncaptured order is not shipped as paid")
	require.NotNil(t, ch)
	assert.True(t, ch.Authorized)
	assert.Equal(t, "authorized", ch.Status)
	rec, _ := c.Record(ctx, "o")
	assert.Equal(t, idempay.StateSucceeded, rec.State, "the charge's key is settled: nothing to resend")
	_, err = c.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrAuthorized, "from the store, still")

	_, err = c.Refund(ctx, refundOf("o", "rf-early", 100))
	require.ErrorIs(t, err, idempay.ErrNotRefundable, "nothing captured: cancel it instead")

	op, err := c.Capture(ctx, capture("cp-1", "o", 1000))
	require.NoError(t, err)
	assert.Equal(t, idempay.OpCapture, op.Type)
	assert.Equal(t, int64(1000), op.Amount)
	ch, err = c.Charge(ctx, req)
	require.NoError(t, err, "captured: a success")
	assert.True(t, paid(err))
	assert.Equal(t, int64(1000), ch.Captured)

	_, err = c.Refund(ctx, refundOf("o", "rf-1", 1001))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds, "only what was captured")
	_, err = c.Refund(ctx, refundOf("o", "rf-1", 1000))
	require.NoError(t, err)
	_, err = c.Capture(ctx, capture("cp-2", "o", 500))
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "o"})
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)

	l, err := c.Ledger(ctx, "o")
	require.NoError(t, err)
	assert.True(t, l.Authorized)
	assert.Equal(t, int64(1500), l.Amount)
	assert.Equal(t, int64(1000), l.Captured)
	assert.Equal(t, int64(1000), l.Refunded)
	assert.Zero(t, l.Refundable)
	assert.Equal(t, 1, s.Ops().Count("cp-1"))
	assert.Zero(t, s.Ops().Count("cp-2")+s.Ops().Count("cn-1"), "the refused ones sent nothing")
	require.NoError(t, s.Ops().Check())
}

// Rule: a cancelled authorisation moved no money: Charge answers it
// failed (ErrCanceled), and it can be neither captured nor refunded.
func TestCancelledAuthorisation(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, true)
	ctx := context.Background()
	op, err := c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "o", Reason: "out of stock"})
	require.NoError(t, err)
	assert.Equal(t, "canceled", op.Status)

	req := order("o")
	req.Extra = map[string]string{"capture": "false"}
	_, err = c.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrCanceled)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	_, err = c.Capture(ctx, capture("cp-1", "o", 0))
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
	_, err = c.Refund(ctx, refundOf("o", "rf-1", 100))
	require.ErrorIs(t, err, idempay.ErrNotRefundable)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-2", IntentID: "o"})
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
	again, err := c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "o", Reason: "out of stock"})
	require.NoError(t, err, "the same cancel answers its success")
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	l, err := c.Ledger(ctx, "o")
	require.NoError(t, err)
	assert.True(t, l.Canceled)
	assert.Zero(t, l.Captured)
	require.NoError(t, s.Ops().Check())
}

// Rule: what a charge can never allow is refused before anything is
// stored: capturing more than was authorised, capturing or cancelling a
// charge captured when it was made. A whole capture takes the authorised
// amount.
func TestCaptureRefusalsAndWholeCapture(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "auth", 1500, true)
	charged(t, c, "auto", 1500, false)
	ctx := context.Background()

	_, err := c.Capture(ctx, capture("cp-big", "auth", 1501))
	require.ErrorIs(t, err, idempay.ErrCaptureExceeds)
	var ae *idempay.AmountError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, int64(1500), ae.Available)
	_, err = c.Capture(ctx, capture("cp-auto", "auto", 100))
	require.ErrorIs(t, err, idempay.ErrNotAuthorization)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-auto", IntentID: "auto"})
	require.ErrorIs(t, err, idempay.ErrNotAuthorization)
	opErr(t, err, idempay.OutcomeFailed)
	for op, id := range map[idempay.OpType]string{idempay.OpCapture: "cp-big", idempay.OpCancel: "cn-auto"} {
		_, err := recordOf(t, store, op, id)
		assert.ErrorIs(t, err, idempay.ErrNotFound, "nothing stored for %s", id)
	}
	_, err = recordOf(t, store, idempay.OpCapture, "cp-auto")
	assert.ErrorIs(t, err, idempay.ErrNotFound)

	op, err := c.Capture(ctx, capture("cp-all", "auth", 0))
	require.NoError(t, err)
	assert.Equal(t, int64(1500), op.Amount, "the whole authorisation")
	assert.Zero(t, s.Stats().Ops.Requests-1, "only the whole capture was sent")
}

// Rule: while a capture may still move money (unknown), the authorisation
// can be neither refunded nor cancelled, and Charge still answers it as
// not paid; once the capture settles, it is.
func TestUnknownCaptureBlocksTheAuthorisation(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
	charged(t, c, "o", 1500, true)
	ctx := context.Background()
	s.InjectOrder("cp-1", refserver.Post, refserver.Post)
	_, err := c.Capture(ctx, capture("cp-1", "o", 0))
	opErr(t, err, idempay.OutcomeUnknown)

	_, err = c.Refund(ctx, refundOf("o", "rf-1", 100))
	require.ErrorIs(t, err, idempay.ErrNotRefundable)
	assert.Contains(t, err.Error(), `capture "cp-1" is open; settle it first`)
	_, err = c.Cancel(ctx, idempay.CancelRequest{CancelID: "cn-1", IntentID: "o"})
	require.ErrorIs(t, err, idempay.ErrAuthorizationClosed)
	req := order("o")
	req.Extra = map[string]string{"capture": "false"}
	_, err = c.Charge(ctx, req)
	assert.False(t, paid(err))

	_, err = c.Capture(ctx, capture("cp-1", "o", 0))
	require.NoError(t, err, "settled by its replay")
	_, err = c.Charge(ctx, req)
	assert.True(t, paid(err))
	_, err = c.Refund(ctx, refundOf("o", "rf-1", 100))
	require.NoError(t, err)
	assert.Zero(t, s.Ops().Count("cn-1"))
	require.NoError(t, s.Ops().Check())
}

// Rule: one capture or one cancel per authorisation, whatever races: two
// instances capture and cancel the same authorisations at once through
// lost answers, crashes and 503s; after a second pass, each authorisation
// is captured or cancelled, never both, never twice (the server would do
// anything it is sent), and the charge answers accordingly.
func TestCaptureAndCancelRaceUnderFaults(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lenient: true, Lease: 30 * time.Millisecond, Seed: 5})
	retry := func(cfg *idempay.Config) {
		cfg.Retry = idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: 2 * time.Millisecond,
			MaxInterval: 10 * time.Millisecond, MaxElapsed: 5 * time.Second}
	}
	a, b := opsClient(t, s, store, retry), opsClient(t, s, store, retry)
	const n = 40
	id := func(i int) string { return fmt.Sprintf("auth-%02d", i) }
	for i := range n {
		charged(t, a, id(i), 1500, true)
	}
	race := func() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, _ = a.Capture(context.Background(), capture("cp-"+id(i), id(i), int64(500+i))) })
			wg.Go(func() {
				_, _ = b.Cancel(context.Background(), idempay.CancelRequest{CancelID: "cn-" + id(i), IntentID: id(i)})
			})
		}
		wg.Wait()
	}
	require.NoError(t, s.SetFaults(refserver.FaultRates{Pre: 0.1, Mid: 0.1, Post: 0.15, Unavailable: 0.05}))
	race()
	require.NoError(t, s.SetFaults(refserver.FaultRates{}))
	race() // the second pass: unknowns resume with their keys; the refused stay refused

	captured, cancelled := 0, 0
	for i := range n {
		req := order(id(i))
		req.Extra = map[string]string{"capture": "false"}
		ch, err := a.Charge(context.Background(), req)
		cp, cn := s.Ops().Count("cp-"+id(i)), s.Ops().Count("cn-"+id(i))
		switch {
		case err == nil && cp == 1 && cn == 0:
			captured++
			assert.Equal(t, int64(500+i), ch.Captured)
		case errors.Is(err, idempay.ErrCanceled) && cn == 1 && cp == 0:
			cancelled++
		default:
			t.Errorf("%s: charge answers %v; the server captured %d times, cancelled %d times", id(i), err, cp, cn)
		}
	}
	require.NoError(t, s.Ops().Check())
	assert.Equal(t, n, captured+cancelled)
	t.Logf("captured %d, cancelled %d, server faults %v", captured, cancelled, s.Stats().Faults)
}
