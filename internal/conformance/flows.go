package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/idempay/idempay"
)

// refundFlow: through a Client, a charge is refunded in two parts up to
// its amount; a third refund beyond it is refused before it is sent; the
// first refund asked again answers from the store; the ledger adds up.
func refundFlow(s Subject) error {
	c, err := newClient(s)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := c.Charge(ctx, s.Charge("cf-refund")); err != nil {
		return fmt.Errorf("the charge to refund: %v", err)
	}
	half := s.Amount / 2
	first := idempay.RefundRequest{RefundID: "cf-refund-1", IntentID: "cf-refund", Amount: half, Currency: s.Currency}
	rest := first
	rest.RefundID, rest.Amount = "cf-refund-2", s.Amount-half
	beyond := rest
	beyond.RefundID, beyond.Amount = "cf-refund-3", 1
	var errs []error
	for _, r := range []idempay.RefundRequest{first, rest} {
		if op, err := c.Refund(ctx, r); err != nil && !errors.Is(err, idempay.ErrPending) {
			errs = append(errs, fmt.Errorf("refund %s of %d: %v", r.RefundID, r.Amount, err))
		} else if op == nil || op.ID == "" || op.Key == "" {
			errs = append(errs, fmt.Errorf("refund %s: no provider ID or key in %+v", r.RefundID, op))
		}
	}
	if _, err := c.Refund(ctx, beyond); !errors.Is(err, idempay.ErrRefundExceeds) {
		errs = append(errs, fmt.Errorf("a refund beyond the charge: want ErrRefundExceeds, got %v", err))
	}
	if op, err := c.Refund(ctx, first); err == nil && op.ReplayedFrom != idempay.ReplayFromStore {
		errs = append(errs, fmt.Errorf("the first refund again came from %q, not the store", op.ReplayedFrom))
	}
	if l, err := c.Ledger(ctx, "cf-refund"); err != nil || l.Refunded+l.RefundsInFlight != s.Amount {
		errs = append(errs, fmt.Errorf("the ledger does not add up: %+v, %v", l, err))
	}
	return errors.Join(errs...)
}

// captureFlow: an authorisation is answered ErrAuthorized (outcome
// pending); a partial capture succeeds, after which the charge answers
// succeeded and only the captured amount can be refunded.
func captureFlow(s Subject) error {
	if s.Manual == nil {
		return nil
	}
	c, err := newClient(s)
	if err != nil {
		return err
	}
	ctx := context.Background()
	req := s.Manual("cf-capture")
	if _, err := c.Charge(ctx, req); !errors.Is(err, idempay.ErrAuthorized) || idempay.OutcomeOf(err) != idempay.OutcomePending {
		return fmt.Errorf("an authorisation: want ErrAuthorized, outcome pending; got %v", err)
	}
	part := max(s.Amount/2, 1)
	if _, err := c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cf-capture-1", IntentID: "cf-capture",
		Amount: part, Currency: s.Currency}); err != nil {
		return fmt.Errorf("capture of %d: %v", part, err)
	}
	var errs []error
	if ch, err := c.Charge(ctx, req); err != nil || ch.Captured != part {
		errs = append(errs, fmt.Errorf("the captured charge: want succeeded with %d captured; got %+v, %v", part, ch, err))
	}
	_, err = c.Refund(ctx, idempay.RefundRequest{RefundID: "cf-capture-rf", IntentID: "cf-capture", Amount: part + 1,
		Currency: s.Currency})
	if !errors.Is(err, idempay.ErrRefundExceeds) {
		errs = append(errs, fmt.Errorf("a refund beyond the capture: want ErrRefundExceeds, got %v", err))
	}
	return errors.Join(errs...)
}

// cancelFlow: a cancelled authorisation answers failed with ErrCanceled,
// and is refused a capture.
func cancelFlow(s Subject) error {
	if s.Manual == nil {
		return nil
	}
	c, err := newClient(s)
	if err != nil {
		return err
	}
	ctx := context.Background()
	req := s.Manual("cf-cancel")
	if _, err := c.Charge(ctx, req); !errors.Is(err, idempay.ErrAuthorized) {
		return fmt.Errorf("an authorisation: want ErrAuthorized, got %v", err)
	}
	if _, err := c.Cancel(ctx, idempay.CancelRequest{CancelID: "cf-cancel-1", IntentID: "cf-cancel"}); err != nil {
		return fmt.Errorf("cancel: %v", err)
	}
	var errs []error
	if _, err := c.Charge(ctx, req); !errors.Is(err, idempay.ErrCanceled) || idempay.OutcomeOf(err) != idempay.OutcomeFailed {
		errs = append(errs, fmt.Errorf("the cancelled charge: want ErrCanceled, outcome failed; got %v", err))
	}
	_, err = c.Capture(ctx, idempay.CaptureRequest{CaptureID: "cf-cancel-cp", IntentID: "cf-cancel", Currency: s.Currency})
	if !errors.Is(err, idempay.ErrAuthorizationClosed) {
		errs = append(errs, fmt.Errorf("a capture after the cancel: want ErrAuthorizationClosed, got %v", err))
	}
	return errors.Join(errs...)
}
