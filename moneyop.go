package idempay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// moneyOp is a refund, capture or cancel in the engine: its own record
// (<namespace>/<type>, by the caller's operation ID), sent through the
// provider's Operator, and entered in the intent's ledger, under the
// ledger's lease, before its first byte.
type moneyOp struct {
	c        *Client
	operator Operator
	finds    bool      // whether operator can look operations of req's type up
	req      OpRequest // as the caller asked: what the fingerprint covers
	fp       string
	key      string    // the caller's key, if any
	send     OpRequest // req completed from the store by prepare: what the adapter sees
}

var _ operation = (*moneyOp)(nil)

func (o *moneyOp) slot() opSlot {
	return opSlot{namespace: o.c.opNamespace(o.req.Type), id: o.req.ID, fp: o.fp, key: o.key}
}

func (o *moneyOp) secrets() []Secret { return nil }

func (o *moneyOp) build(ctx context.Context, t Target, key string) (*http.Request, error) {
	return o.operator.NewOpRequest(ctx, t, o.send, key)
}

func (o *moneyOp) read(resp *http.Response, body []byte) Verdict {
	return o.receipt(o.operator.ReadOp(o.req.Type, resp, body))
}

func (o *moneyOp) find(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error) {
	if !o.finds {
		return Verdict{}, fmt.Errorf("%w: %s cannot look a %s up", ErrNoLookup, o.c.provider.Name(), o.req.Type)
	}
	v, err := o.operator.FindOp(ctx, hc, t, o.send, rec)
	v = o.receipt(v)
	if err == nil && (v.Kind == KindSucceeded || v.Kind == KindPending) && o.neverEntered(ctx, rec) {
		// A provider that keeps no capture or cancel object (Omise) can
		// only say "the charge is captured". An attempt of a capture or
		// cancel with no entry in the ledger sent nothing (the entry is
		// written before the first byte), so what the lookup found was
		// another operation's (simulator, OPEN-11).
		return Verdict{Kind: KindNotFound}, nil
	}
	return v, err
}

// neverEntered reports whether rec, the record of a capture or cancel, has
// no entry in its intent's ledger: its attempt never reached the point
// where it could send.
func (o *moneyOp) neverEntered(ctx context.Context, rec Record) bool {
	if o.req.Type != OpCapture && o.req.Type != OpCancel {
		return false
	}
	doc, err := o.c.readLedger(ctx, o.req.IntentID, ledgerRead{snapshot: true})
	if err != nil {
		return false
	}
	for _, e := range doc.Ops {
		if e.OpID == o.req.ID && e.Key == rec.Key {
			return false
		}
	}
	return true
}

func (o *moneyOp) lookupFirst() bool { return providerLooksUpFirst(o.c.provider) }

// prepare completes the request from the intent's charge (the provider's
// charge ID, the authorised amount of a whole capture) and refuses what
// that charge can never allow, before anything is stored: no attempt of
// the operation could have passed the same rules, so none was sent.
func (o *moneyOp) prepare(ctx context.Context) error {
	if o.key != "" {
		if err := o.c.claimKey(ctx, o.key, keyOwner{kind: string(o.req.Type), id: o.req.ID}); err != nil {
			return err
		}
	}
	doc, err := o.c.readLedger(ctx, o.req.IntentID, ledgerRead{snapshot: true})
	if err == nil {
		o.send = o.req
		o.send.ChargeRef, o.send.ChargeAttempt = doc.Charge.Ref, doc.Charge.Attempt
		if o.send.Type == OpCancel {
			o.send.Currency = doc.Charge.Currency // a cancel names none
		}
		if o.send.Amount == 0 {
			o.send.Amount = doc.Charge.Amount // a whole capture; a cancel
		}
		err = doc.Charge.admit(o.send)
		if err != nil {
			err = refuse(err)
		}
	}
	var r *refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		return &ChargeError{IntentID: o.req.ID, Outcome: OutcomeFailed, Err: r.err}
	}
	// Nothing stored or sent by this call, but an earlier one may have.
	return &ChargeError{IntentID: o.req.ID, Outcome: OutcomeUnknown, Err: err}
}

// beforeSend enters this attempt in the intent's ledger, under its lease:
// checked against every operation that may still move money, and written
// durably before the first byte. An attempt entered already (by an earlier
// call that may have sent it) goes on with the same key unchecked. The
// same operation made before under a record a sweep has deleted is never
// made again: its success is answered from the ledger.
func (o *moneyOp) beforeSend(ctx context.Context, _ *Claim, res Reservation) error {
	rec := res.Record
	return o.c.withLedger(ctx, o.req.IntentID, func(d *ledgerDoc) error {
		if _, ok := d.entry(o.req.Type, o.req.ID, currentAttempt(rec)); ok {
			return nil
		}
		if e, ok := d.keyOf(rec.Key, o.req.Type, o.req.ID); ok {
			return refuse(invalid("Key", "is the key of %s %q of intent %q; a key names one operation", e.Type, e.OpID, o.req.IntentID))
		}
		if err := o.madeBefore(d, rec); err != nil {
			return err
		}
		if err := d.admit(o.send); err != nil {
			return refuse(err)
		}
		d.Ops = append(d.Ops, LedgerOp{Type: o.req.Type, OpID: o.req.ID, Attempt: rec.Attempt, Key: rec.Key,
			Amount: o.send.Amount, State: StateOpen, Reserved: rec.CreatedAt})
		return nil
	})
}

// madeBefore looks in the ledger for this operation made under an earlier
// record of its ID, which a sweep deleted: one that succeeded is answered
// (errAnswered), one whose outcome the ledger does not know stops this
// attempt unsent; one that failed moved no money, and a new attempt may
// follow it.
func (o *moneyOp) madeBefore(d *ledgerDoc, rec Record) error {
	for _, e := range d.forgotten(o.req.Type, o.req.ID, rec) {
		switch e.State {
		case StateFailed:
			continue
		case StateSucceeded:
			return &errAnswered{receipt: o.ledgerReceipt(d, e)}
		}
		return fmt.Errorf("%w: attempt %d of %s %q (key %q), whose record is gone, is %s in the ledger; settle it by lookup",
			ErrOutcomeUnknown, e.Attempt, e.Type, e.OpID, e.Key, e.State)
	}
	return nil
}

// ledgerReceipt is the engine's receipt for a succeeded entry: what the
// ledger remembers of the operation, replayed (not the provider's status
// word, which it does not keep).
func (o *moneyOp) ledgerReceipt(d *ledgerDoc, e LedgerOp) *Charge {
	return &Charge{IntentID: e.OpID, Key: e.Key, ID: e.Ref, State: StateSucceeded,
		Amount: e.Amount, Currency: d.Charge.Currency, Attempt: e.Attempt, Replayed: true,
		ReplayedFrom: ReplayFromStore}
}

// record writes an operation's outcome into its ledger entry before (or,
// for a failure resting on the lease, after) its record is closed.
func (o *moneyOp) record(ctx context.Context, rec Record, st State, out *storedOutcome) error {
	var ref string
	if out != nil && out.Charge != nil {
		ref = out.Charge.ID
	}
	return o.c.noteOp(ctx, o.req.Type, o.req.IntentID, rec, st, ref)
}

// answer answers a receipt. One answered from the store is checked
// against the intent's ledger first: an operation ID used again for
// another intent finds that intent's operation, which this intent's
// ledger never entered, and is refused, never told as this intent's.
func (o *moneyOp) answer(ctx context.Context, ch *Charge) (*Charge, error) {
	if ch.ReplayedFrom == ReplayFromStore {
		if err := o.ownedHere(ctx, ch); err != nil {
			return nil, err
		}
	}
	return answerPending(ch)
}

// ownedHere checks that the stored receipt ch is of an attempt the
// intent's ledger entered (every attempt that may have moved money was,
// before its first byte).
func (o *moneyOp) ownedHere(ctx context.Context, ch *Charge) error {
	doc, err := o.c.readLedger(ctx, o.req.IntentID, ledgerRead{snapshot: true})
	if err == nil {
		for _, e := range doc.Ops {
			if e.Type == o.req.Type && e.OpID == o.req.ID && e.Key == ch.Key {
				return nil
			}
		}
		return &ChargeError{IntentID: o.req.ID, Key: ch.Key, Outcome: OutcomeFailed,
			Err: fmt.Errorf("%w: %s %q was made for another intent than %q; nothing was sent for it", ErrOpOfOtherIntent,
				o.req.Type, o.req.ID, o.req.IntentID)}
	}
	var r *refusal
	if errors.As(err, &r) {
		return &ChargeError{IntentID: o.req.ID, Key: ch.Key, Outcome: OutcomeFailed, Err: r.err}
	}
	return &ChargeError{IntentID: o.req.ID, Key: ch.Key, Outcome: OutcomeUnknown, Err: err}
}

// receipt moves the adapter's Operation into the engine's receipt, with
// the request's amount and currency where the answer gives none, and the
// state the verdict's kind says (the kind is what the record is closed
// with; a receipt saying otherwise would be answered otherwise).
func (o *moneyOp) receipt(v Verdict) Verdict {
	if v.Operation == nil || v.Charge != nil {
		return v
	}
	ch := receiptOf(v.Operation)
	ch.Amount = cmp.Or(ch.Amount, o.send.Amount)
	ch.Currency = strings.ToUpper(cmp.Or(ch.Currency, o.send.Currency))
	if v.Kind == KindSucceeded || v.Kind == KindPending {
		ch.State = stateOf(v.Kind)
	}
	v.Charge, v.Operation = ch, nil
	return v
}
