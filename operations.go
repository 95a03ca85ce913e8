package idempay

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// Refund refunds req.Amount of a charged intent exactly once, with the
// discipline of Charge: req.RefundID gets one key, durable in the store
// before the first byte, resent by every retry, restart and instance until
// the refund's outcome is known; identical concurrent calls share one
// flight, which outlives an impatient caller; a panic ends it unknown.
// OutcomeOf(err) says what happened, and a caller who switches on it alone
// is right:
//
//   - nil error: succeeded. The *Operation is the provider's refund.
//   - OutcomePending: the provider accepted the refund and has not finished
//     it. Its amount counts as refunded until it settles; call Refund again
//     (same request) later to learn how it ended.
//   - OutcomeFailed: no money moved: refused by the provider, or refused
//     here before anything was sent (ErrRefundExceeds, ErrNotRefundable,
//     ErrChargeNotSucceeded, ErrNotSupported, ErrOpOfOtherIntent, a
//     *ValidationError).
//   - OutcomeUnknown: money may have moved. Call Refund again with the same
//     request to resume with the same key (or settle by lookup); never
//     refund it under another RefundID.
//
// Before the first byte, the refund is entered in the intent's ledger
// under the ledger's lease, and refused if the intent's refunds, those
// pending or unknown included, would come to more than was charged (or
// captured): however many goroutines and instances refund one intent, and
// wherever a process crashes, the refunds never exceed the charge. The
// ledger outlives the records the store's retention deletes: a refund
// weeks after the charge is checked against it, and the same RefundID
// asked again after its record was deleted answers the refund made (its
// success replayed), never refunding again. A RefundID names one refund
// of one intent: used for another intent it is refused
// (ErrOpOfOtherIntent, outcome failed); so is a Key another charge or
// operation was made with.
func (c *Client) Refund(ctx context.Context, req RefundRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// Capture captures an authorisation (a charge made with manual capture)
// exactly once, as Refund refunds: in part (Amount at most what was
// authorised; the provider releases the rest) or in whole (Amount zero).
// At most one capture or cancel of an authorisation is let through: while
// one may still move money, another is refused with ErrAuthorizationClosed.
// A charge captured when it was made is refused with ErrNotAuthorization.
// Its outcomes read as Refund's; once it succeeds, Charge of the intent
// answers succeeded.
func (c *Client) Capture(ctx context.Context, req CaptureRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// Cancel voids an authorisation that was not captured, exactly once, as
// Refund refunds. Once it succeeds, Charge of the intent answers failed
// with ErrCanceled. Its outcomes read as Refund's.
func (c *Client) Cancel(ctx context.Context, req CancelRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// operate runs one refund, capture or cancel through the engine.
func (c *Client) operate(ctx context.Context, op OpRequest, key string, validate func() error) (*Operation, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	adapter, ok := capabilityOf(c.provider, op.Type)
	if !ok {
		return nil, &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: OutcomeFailed,
			Err: fmt.Errorf("%w: %s has no %s", ErrNotSupported, c.provider.Name(), op.Type)}
	}
	if err := validate(); err != nil {
		return nil, err
	}
	if err := adapter.validate(op); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, %s not looked up: %w", op.Type, err)}
	}
	op.Currency = strings.ToUpper(op.Currency)
	mop := &moneyOp{c: c, cap: adapter, req: op, fp: opFingerprint(c.opNamespace(op.Type), op), key: key}
	ch, err := c.flights.do(ctx, c, mop)
	return opAnswer(op.Type, op.IntentID, ch, err)
}

// SettleRefund finds out how an unsettled refund ended without resending
// it, by asking a provider that can look refunds up (a RefundFinder), and
// records what it learns: for a refund stuck on a stored failure, or one a
// webhook says has completed. req is the refund's original request. A
// refund whose record the store's retention deleted answers from the
// intent's ledger (asking the provider if the ledger does not know). It
// takes the refund's lease only when it is free, so it may run while the
// refund is on the wire (as Settle does for a charge). A settled refund
// answers from the store. Its return values read like Refund's.
func (c *Client) SettleRefund(ctx context.Context, req RefundRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// SettleCapture settles an unsettled capture by lookup, as SettleRefund
// settles a refund.
func (c *Client) SettleCapture(ctx context.Context, req CaptureRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// SettleCancel settles an unsettled cancel by lookup, as SettleRefund
// settles a refund.
func (c *Client) SettleCancel(ctx context.Context, req CancelRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// settleOp runs the lookup of one operation through the engine's settle.
func (c *Client) settleOp(ctx context.Context, op OpRequest, key string) (*Operation, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	adapter, ok := capabilityOf(c.provider, op.Type)
	if !ok {
		return nil, &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("%w: %s has no %s", ErrNotSupported, c.provider.Name(), op.Type)}
	}
	op.Currency = strings.ToUpper(op.Currency)
	mop := &moneyOp{c: c, cap: adapter, req: op, fp: opFingerprint(c.opNamespace(op.Type), op), key: key}
	if err := mop.prepare(ctx); err != nil {
		return opAnswer(op.Type, op.IntentID, nil, err)
	}
	if ch, err, ok := c.settleForgotten(ctx, mop); ok {
		return opAnswer(op.Type, op.IntentID, ch, err)
	}
	ch, err := c.flights.settle(ctx, c, mop)
	return opAnswer(op.Type, op.IntentID, ch, err)
}

// Ledger returns what the store knows of an intent's money: charged,
// captured, refunded, what is left to refund, and each refund, capture and
// cancel with its state, as their own records say while they exist and the
// ledger keeps it after. It reads the store only;
// it takes no lease and never asks the provider. An intent whose charge is
// not a settled success has no ledger: the error matches
// ErrChargeNotSucceeded.
func (c *Client) Ledger(ctx context.Context, intentID string) (*Ledger, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	doc, err := c.loadLedger(ctx, intentID)
	var r *refusal
	if errors.As(err, &r) {
		return nil, r.err
	}
	if err != nil {
		return nil, err
	}
	return doc.summary(intentID), nil
}

// UnresolvedOps yields, as Unresolved does for charges, every operation of
// type t whose outcome is not known (open or pending); each Record's
// IntentID is the operation's ID. After a restart, call each again with its
// original request to resume it.
func (c *Client) UnresolvedOps(ctx context.Context, t OpType) iter.Seq2[Record, error] {
	return c.unresolved(ctx, c.opNamespace(t))
}
