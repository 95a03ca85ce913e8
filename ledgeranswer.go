package idempay

import (
	"context"
	"errors"
	"fmt"
)

// Answers from the intent's ledger for operations whose records a sweep
// has deleted: the ledger keeps every attempt's outcome, written before its
// record was closed, for the ledger's life.

// errAnswered stops an attempt before its first byte because the ledger
// shows the same operation made before: receipt is its success, which
// answers the call and closes the new record (nothing was sent under it).
type errAnswered struct{ receipt *Charge }

func (e *errAnswered) Error() string {
	return fmt.Sprintf("idempay: %s answered from the ledger", e.receipt.IntentID)
}

// answerBefore closes f's record with the success the ledger remembers and
// answers it. Not recorded, the record stays open and the next call finds
// the same answer.
func (c *Client) answerBefore(ctx context.Context, f *flight, a *errAnswered) (*Charge, error) {
	c.closeWith(ctx, f.op, f.claim, f.rec, StateSucceeded, &storedOutcome{Charge: a.receipt, Kind: KindSucceeded})
	return f.op.answer(ctx, a.receipt)
}

// settleForgotten settles an operation from what its ledger entry says
// when the entry's record is gone: deleted by a sweep, or replaced by a
// later record of the same ID that an unsettled entry stopped before its
// first byte (see madeBefore). It asks the provider only when the entry
// is still unsettled (written before outcomes were kept in the ledger, or
// a failure whose write into the ledger was lost). ok is false when the
// engine answers: no such entry.
func (c *Client) settleForgotten(ctx context.Context, o *moneyOp) (ch *Charge, err error, ok bool) {
	rec, err := c.store.Load(ctx, o.slot().namespace, o.req.ID)
	gone := errors.Is(err, ErrNotFound)
	if err != nil && !gone {
		return nil, nil, false
	}
	doc, err := c.readLedger(ctx, o.req.IntentID, ledgerRead{snapshot: true})
	if err != nil {
		return nil, nil, false
	}
	e, found := doc.latest(o.req.Type, o.req.ID)
	if !gone {
		e, found = unsettledForgotten(doc, o.req.Type, o.req.ID, rec)
	}
	if !found {
		return nil, nil, false
	}
	if !e.State.Closed() {
		if e, err = c.lookUpEntry(ctx, o, e); err != nil {
			return nil, &ChargeError{IntentID: o.req.ID, Key: e.Key, Outcome: OutcomeUnknown, Err: err}, true
		}
	}
	if e.State == StateFailed {
		return nil, &ChargeError{IntentID: o.req.ID, Key: e.Key, Outcome: OutcomeFailed,
			Err: fmt.Errorf("%w: the ledger shows %s %q failed; its record is gone", ErrDeclined, e.Type, e.OpID)}, true
	}
	ch, err = o.answer(ctx, o.ledgerReceipt(&doc, e))
	return ch, err, true
}

// unsettledForgotten is an unsettled entry of the operation (t, id) that
// is not of rec, its current record.
func unsettledForgotten(d ledgerDoc, t OpType, id string, rec Record) (LedgerOp, bool) {
	for _, e := range d.forgotten(t, id, rec) {
		if !e.State.Closed() {
			return e, true
		}
	}
	return LedgerOp{}, false
}

// lookUpEntry asks the provider how the unsettled entry e ended and writes
// a settled answer into the ledger; it returns the entry as it now stands.
func (c *Client) lookUpEntry(ctx context.Context, o *moneyOp, e LedgerOp) (LedgerOp, error) {
	rec := Record{Namespace: o.slot().namespace, ID: e.OpID, Attempt: e.Attempt, Key: e.Key, CreatedAt: e.Reserved}
	v, err := c.find(ctx, o, rec)
	switch {
	case err != nil:
		return e, err
	case v.Kind == KindSucceeded:
		e.State = StateSucceeded
		if v.Charge != nil {
			e.Ref = v.Charge.ID
		}
	case v.Kind == KindDeclined:
		e.State = StateFailed
	default:
		return e, fmt.Errorf("%w: the lookup of %s %q answered %s", ErrOutcomeUnknown, e.Type, e.OpID, v.Kind)
	}
	a := attemptID{attempt: e.Attempt, key: e.Key, reserved: e.Reserved}
	return e, c.withLedger(ctx, o.req.IntentID, func(d *ledgerDoc) error {
		if x, ok := d.entry(e.Type, e.OpID, a); ok && !x.State.Closed() {
			x.State, x.Ref = e.State, e.Ref
		}
		return nil
	})
}

// chargedBefore returns an *errAnswered when the intent's ledger holds a
// succeeded charge: rec, about to be sent, is then a charge of a paid
// intent whose own record is gone (or could not be closed). Its answer is
// that success, as a settled record would give it.
func (c *Client) chargedBefore(ctx context.Context, rec Record) error {
	lrec, err := c.store.Load(ctx, c.ledgerNamespace(), rec.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("%w: ledger: %w", ErrStore, err)
	}
	doc, err := decodeLedger(lrec.Result)
	if err != nil || doc.Charge == nil {
		return err
	}
	ch := doc.Charge
	return &errAnswered{receipt: &Charge{IntentID: rec.ID, Key: ch.Key, ID: ch.Ref,
		Status: ch.Status, State: StateSucceeded, Amount: ch.Amount, Currency: ch.Currency,
		Authorized: ch.Authorized, Attempt: ch.Attempt, Replayed: true, ReplayedFrom: ReplayFromStore,
		ParamsDiffer: ch.Fingerprint != "" && ch.Fingerprint != rec.Fingerprint}}
}
