package idempay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// settle is Settle's work: answer a settled record from the store, else ask
// the provider and record what it proves. It takes the lease only if it is
// free, so that recording (which frees the lease) never frees a running
// flight's; under a flight's lease it tells what the lookup says and
// records nothing: the flight learns it from the provider itself.
func (c *Client) settle(ctx context.Context, op operation, prog *progress) (*Charge, error) {
	s := op.slot()
	rec, err := c.store.Load(ctx, s.namespace, s.id)
	if err != nil {
		return nil, err
	}
	prog.setKey(rec.Key)
	if rec.State.Closed() {
		return c.fromStore(ctx, op, rec)
	}
	claim, res, err := c.claims.Reserve(ctx, ReserveRequest{Namespace: s.namespace, ID: s.id,
		Attempt: rec.Attempt, Key: rec.Key, Fingerprint: rec.Fingerprint})
	if err != nil {
		return c.unsettled(ctx, op, rec, fmt.Errorf("%w: reserve: %w", ErrStore, err))
	}
	if rec = res.Record; rec.State.Closed() {
		return c.fromStore(ctx, op, rec)
	}
	if claim != nil {
		prog.claim.Store(claim)
	}
	v, err := c.find(ctx, op, rec)
	if err != nil {
		if claim != nil {
			c.release(ctx, claim)
		}
		return c.unsettled(ctx, op, rec, err)
	}
	return c.concludeLookup(ctx, op, claim, rec, v)
}

// unsettled answers for a record a lookup did not settle: a pending one
// with its stored charge (what the customer must be shown), else unknown.
func (c *Client) unsettled(ctx context.Context, op operation, rec Record, cause error) (*Charge, error) {
	if rec.State == StatePending {
		if ch, err := c.fromStore(ctx, op, rec); ch != nil {
			return ch, err
		}
	}
	return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: outcomeOfState(rec.State), Err: cause}
}

// settlePending asks the provider how a pending charge ended, if it can
// look charges up. A lookup that cannot tell leaves the charge pending: the
// stored pending charge is the answer, as it is for providers with no
// lookup.
func (c *Client) settlePending(ctx context.Context, op operation, claim *Claim, rec Record) (*Charge, error) {
	v, err := c.find(ctx, op, rec)
	if err == nil && settles(v.Kind) {
		return c.concludeLookup(ctx, op, claim, rec, v)
	}
	if err != nil && !errors.Is(err, ErrNoLookup) {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: lookup of a pending charge failed",
			slog.String("intent", rec.ID), slog.String("error", err.Error()))
	}
	c.release(ctx, claim)
	return c.fromStore(ctx, op, rec)
}

// settleExpired handles an unresolved key past the retention window, or
// of an age the store's clock cannot tell (known false: it stepped back
// since the key was reserved): it is never resent; the provider is asked if
// it can be, else the caller must reconcile.
func (c *Client) settleExpired(ctx context.Context, op operation, claim *Claim, rec Record, known bool) (*Charge, error) {
	v, err := c.find(ctx, op, rec)
	if err == nil && settles(v.Kind) {
		return c.concludeLookup(ctx, op, claim, rec, v)
	}
	cause := fmt.Errorf("%w: reserved %s", ErrKeyExpired, rec.CreatedAt.Format(time.RFC3339))
	if !known {
		cause = fmt.Errorf("%w: reserved %s; the key's age is unknown (the store's clock stepped back since, or what is known of it could not be read)",
			ErrKeyExpired, rec.CreatedAt.Format(time.RFC3339))
	}
	// Not found proves nothing was charged only for a key past retention,
	// which nothing can still be carrying; a key of unknown age may be
	// young, and a request under it still on its way.
	if err == nil && v.Kind == KindNotFound && known {
		// The provider proves that nothing was charged under the key: the
		// attempt failed, and the next charge begins a new one instead of
		// leaving the intent unknown for ever.
		raw, _ := (&storedOutcome{Kind: KindNotFound}).encode()
		if claim.CloseIfHeld(ctx, StateFailed, raw) == nil {
			c.recordAfter(ctx, op, rec, StateFailed)
			return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeFailed,
				Err: fmt.Errorf("%w; the provider shows no charge under it", cause)}
		}
		return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown, Err: cause}
	}
	c.release(ctx, claim)
	if err != nil {
		cause = fmt.Errorf("%w; lookup: %w", cause, err) // e.g. two charges found for one intent
	}
	return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown, Err: cause}
}

// concludeLookup settles a record from a lookup's verdict; anything but a
// found operation leaves it as it was. With a nil claim (a Settle while a
// flight holds the lease) it records nothing and only answers.
func (c *Client) concludeLookup(ctx context.Context, op operation, claim *Claim, rec Record, v Verdict) (*Charge, error) {
	f := &flight{c: c, op: op, rec: rec, claim: claim, settled: &v}
	f.complete(&v, nil, nil)
	switch v.Kind {
	case KindSucceeded, KindPending:
		if v.Kind == KindPending && rec.State == StatePending {
			// Still pending: nothing new to record but the lease to give
			// back, and the stored charge is the answer: a lookup's copy
			// may lack what the customer must be shown (a payment page).
			if claim != nil {
				c.release(ctx, claim)
			}
			if ch, err := c.fromStore(ctx, op, rec); ch != nil {
				ch.ReplayedFrom = ReplayFromLookup // the provider was asked, and says pending still
				return ch, err
			}
		}
		ch := f.answer(v)
		c.closeWith(ctx, op, claim, rec, stateOf(v.Kind), &storedOutcome{Charge: ch, Kind: v.Kind})
		return op.answer(ctx, ch)
	case KindDeclined:
		if err := c.closeWith(ctx, op, claim, rec, StateFailed, &storedOutcome{Refusal: v.Err, Kind: v.Kind}); err != nil {
			return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown,
				Err: fmt.Errorf("%w: decline not recorded: %w", ErrStore, err)} // see conclude
		}
		return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeFailed,
			Err: c.refusalCause(ctx, op, rec, v.Kind, v.Err)}
	}
	if claim != nil {
		c.release(ctx, claim)
	}
	// Not found is no proof here: the key may still arrive, or be resent.
	cause := joinCause(nil, v.Err, nil)
	switch {
	case cause == nil && v.Kind == KindNotFound:
		cause = errLookupNotFound
	case cause == nil:
		cause = fmt.Errorf("idempay: lookup answered %s", v.Kind)
	}
	return c.unsettled(ctx, op, rec, cause)
}

// find asks the provider for the record's operation, outside the attempt
// count.
//
// A window from CreatedAt must start before the charge (lookupRecord). The
// lookup's own answer may be the first to tell the provider's clock, and
// show that the store's reads further ahead of it than the window allowed:
// a "not found" from that window proves nothing, and the provider is
// asked again from the wider one.
func (c *Client) find(ctx context.Context, op operation, rec Record) (Verdict, error) {
	asked, err := c.lookupRecord(ctx, rec)
	if err != nil {
		return Verdict{Kind: KindUnknown}, err
	}
	v, err := op.find(withProbe(ctx, nil), c.hc, c.target, asked)
	if err != nil || v.Kind != KindNotFound {
		return v, err
	}
	wider, err := c.lookupRecord(ctx, rec)
	if err != nil {
		return Verdict{Kind: KindUnknown}, err
	}
	if !wider.CreatedAt.Before(asked.CreatedAt.Add(-time.Second)) {
		return v, nil
	}
	c.keepStoreClock(ctx, rec) // what the answer taught, for the fleet
	return op.find(withProbe(ctx, nil), c.hc, c.target, wider)
}

// proveNew asks the provider about an operation whose record the store
// cannot prove is the first (Reservation.Unproven: it lost acknowledged
// writes lately), before anything is sent under it. What the provider
// finds is the answer, and nothing is sent; only a provider that proves
// there is nothing lets the flight go on (done false). Without a lookup,
// nothing is sent: the outcome is unknown, the record left open to settle.
//
// The provider is asked without the record's key: the key is the one just
// minted, and the question is whether anything was done for the intent (or
// the operation ID) under any key, such as one the lost record held.
func (c *Client) proveNew(ctx context.Context, op operation, claim *Claim, rec Record) (*Charge, error, bool) {
	anyKey := rec
	anyKey.Key = ""
	v, err := c.find(ctx, op, anyKey)
	switch {
	case err == nil && settles(v.Kind):
		ch, err := c.concludeLookup(ctx, op, claim, rec, v)
		return ch, err, true
	case err == nil && v.Kind == KindNotFound:
		return nil, nil, false
	}
	c.release(ctx, claim)
	cause := fmt.Errorf("%w: the store lost writes it had acknowledged, and the provider could not show that %q was never sent", ErrStore, rec.ID)
	if err != nil {
		cause = fmt.Errorf("%w; lookup: %w", cause, err)
	}
	return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown, Err: cause}, true
}
