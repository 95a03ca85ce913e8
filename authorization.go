package idempay

import (
	"context"
	"fmt"
)

// answerCharge is Charge's answer for a succeeded or pending charge. An
// authorisation (Charge.Authorized: made with manual capture) has moved no
// money until it is captured, so it is answered from its ledger: captured,
// succeeded (Captured says how much); cancelled, failed with ErrCanceled;
// otherwise pending with ErrAuthorized and State StatePending, so that a
// caller who switches on OutcomeOf or on State never ships it as paid. The
// record keeps it succeeded: the provider's charge is settled, and only
// the money's move waits on a capture.
func (c *Client) answerCharge(ctx context.Context, ch *Charge) (*Charge, error) {
	if ch.State != StateSucceeded || !ch.Authorized {
		return answerPending(ch)
	}
	doc, err := c.readLedger(ctx, ch.IntentID, ledgerRead{reconciled: true})
	switch {
	case err != nil:
		return nil, &ChargeError{IntentID: ch.IntentID, Key: ch.Key, Outcome: OutcomeUnknown, Requests: ch.Requests,
			Err: fmt.Errorf("%w: authorised; whether it was captured is unknown: %w", ErrStore, err)}
	case doc.Charge == nil:
		return authorised(ch)
	}
	if n := doc.captured(); n > 0 {
		ch.Captured = n
		return ch, nil
	}
	if e, ok := doc.first(OpCancel, succeeded); ok {
		return nil, &ChargeError{IntentID: ch.IntentID, Key: ch.Key, Outcome: OutcomeFailed, Requests: ch.Requests,
			Err: fmt.Errorf("%w by %q", ErrCanceled, e.OpID)}
	}
	return authorised(ch)
}

// authorised is the answer for an authorisation not captured: pending, in
// State as in the outcome.
func authorised(ch *Charge) (*Charge, error) {
	ch.State = StatePending
	return ch, pendingError(ch, ErrAuthorized)
}

// refusalCause is the cause chain of a charge the provider refused, as a
// lookup found it or the record keeps it. An authorisation this client
// cancelled reads "refused" at the provider (Stripe: a canceled
// PaymentIntent; Omise: a reversed charge) though nothing was declined: the
// hold was released and no money moved. Such a refusal answers
// ErrCanceled, as answerCharge does while the record holds the
// authorisation. The intent's ledger tells them apart: it holds the
// authorisation under rec's key and the cancel's success.
func (c *Client) refusalCause(ctx context.Context, op operation, rec Record, k Kind, apiErr *APIError) error {
	sentinel := failedSentinel(k)
	if _, charge := op.(chargeOp); charge && k == KindDeclined {
		doc, err := c.readLedger(ctx, rec.ID, ledgerRead{reconciled: true})
		auth := err == nil && doc.Charge != nil && doc.Charge.Authorized &&
			(doc.Charge.Key == "" || doc.Charge.Key == rec.Key)
		if _, ok := doc.first(OpCancel, succeeded); auth && ok {
			sentinel = ErrCanceled
		}
	}
	return joinCause(sentinel, apiErr, nil)
}
