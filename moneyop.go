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
// adapter's capability, and entered in the intent's ledger, under the
// ledger's lease, before its first byte.
type moneyOp struct {
	c    *Client
	cap  capability
	req  OpRequest // as the caller asked: what the fingerprint covers
	fp   string
	key  string    // the caller's key, if any
	send OpRequest // req completed from the store by prepare: what the adapter sees
}

var _ operation = (*moneyOp)(nil)

func (o *moneyOp) slot() opSlot {
	return opSlot{namespace: o.c.opNamespace(o.req.Type), id: o.req.ID, fp: o.fp, key: o.key}
}

func (o *moneyOp) secrets() []Secret { return nil }

func (o *moneyOp) build(ctx context.Context, t Target, key string) (*http.Request, error) {
	return o.cap.build(ctx, t, o.send, key)
}

func (o *moneyOp) read(resp *http.Response, body []byte) Verdict {
	return o.receipt(o.cap.read(resp, body))
}

func (o *moneyOp) find(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error) {
	if o.cap.find == nil {
		return Verdict{}, fmt.Errorf("%w: %s cannot look a %s up", ErrNoLookup, o.c.provider.Name(), o.req.Type)
	}
	v, err := o.cap.find(ctx, hc, t, o.send, rec)
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
	doc, err := o.c.readLedger(ctx, o.req.IntentID)
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

func (o *moneyOp) guarded() bool { return lookupGuarded(o.c.provider) }

// prepare completes the request from the intent's charge (the provider's
// charge ID, the authorised amount of a whole capture) and refuses what
// that charge can never allow, before anything is stored: no attempt of
// the operation could have passed the same rules, so none was sent.
func (o *moneyOp) prepare(ctx context.Context) error {
	doc, err := o.c.readLedger(ctx, o.req.IntentID)
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
// call that may have sent it) goes on with the same key unchecked.
func (o *moneyOp) beforeSend(ctx context.Context, _ *Claim, res Reservation) error {
	rec := res.Record
	return o.c.withLedger(ctx, o.req.IntentID, func(d *ledgerDoc) error {
		if d.has(o.req.Type, o.req.ID, rec.Attempt, rec.Key) {
			return nil
		}
		if err := d.admit(o.send); err != nil {
			return refuse(err)
		}
		d.Ops = append(d.Ops, LedgerOp{Type: o.req.Type, OpID: o.req.ID, Attempt: rec.Attempt, Key: rec.Key,
			Amount: o.send.Amount, State: StateOpen})
		return nil
	})
}

func (o *moneyOp) answer(_ context.Context, ch *Charge) (*Charge, error) { return answerPending(ch) }

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
