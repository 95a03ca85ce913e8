package idempay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// conclude turns the deciding verdict of a flight into the caller's answer
// and the intent's state in the store. It is where "never say failed when
// the truth is unknown" is enforced: a refusal counts as definite only if
// nothing before it could have moved money, except a decline, which the
// provider stores for the key and so speaks for every earlier attempt.
func (c *Client) conclude(ctx context.Context, f *flight, v Verdict, cause error) (*Charge, error) {
	attempts := int(f.probe.sent.Load())
	fail := func(o Outcome, sentinel error) (*Charge, error) {
		return nil, &ChargeError{IntentID: f.req.IntentID, Key: f.rec.Key, Outcome: o, Attempts: attempts,
			Err: joinCause(sentinel, v.Err, cause)}
	}
	earlier := f.mayHaveCharged(max(len(f.attempts)-1, 0))
	switch v.Kind {
	case KindSucceeded, KindPending:
		ch := *v.Charge
		ch.Attempts = attempts
		if f.settled != nil {
			ch.Replayed, ch.ReplayedFrom = true, ReplayFromLookup
		} else if v.Replayed {
			ch.Replayed, ch.ReplayedFrom = true, ReplayFromServer
		}
		c.close(ctx, f.rec, stateOf(v.Kind), &storedOutcome{Charge: &ch, Kind: v.Kind})
		return &ch, nil
	case KindDeclined:
		// Final whatever came before: a provider that de-duplicates stores
		// the decline for the key, and one that does not (a LookupGuard) is
		// only ever resent after a lookup proved no charge exists.
		c.close(ctx, f.rec, StateFailed, &storedOutcome{Refusal: v.Err, Kind: v.Kind})
		return fail(OutcomeFailed, ErrDeclined)
	case KindInvalid:
		if earlier {
			break
		}
		if v.Err != nil { // the provider refused these parameters: they cannot change
			c.close(ctx, f.rec, StateFailed, &storedOutcome{Refusal: v.Err, Kind: v.Kind})
		} else {
			c.release(ctx, f.rec)
		}
		return fail(OutcomeFailed, ErrInvalidRequest)
	case KindConfig, KindNotSent, KindRateLimited:
		if earlier {
			break
		}
		// Nothing reached the part that moves money. The key stays open so
		// that a later call resends the same one once the cause is fixed.
		c.release(ctx, f.rec)
		if v.Kind == KindConfig {
			return fail(OutcomeFailed, ErrConfig)
		}
		return fail(OutcomeFailed, ErrUnreachable)
	}
	c.release(ctx, f.rec)
	return fail(OutcomeUnknown, unknownCause(v))
}

// unknownCause names why an outcome is unknown.
func unknownCause(v Verdict) error {
	switch {
	case v.Kind == KindKeyConflict:
		return ErrKeyConflict
	case v.Kind == KindInFlight:
		return ErrInProgress
	case v.Kind == KindServerError && v.Replayed:
		return ErrStoredFailure
	case v.Err == nil:
		// No provider error to show: say what the last answer was.
		return fmt.Errorf("idempay: last answer %s", v.Kind)
	}
	return nil
}

// joinCause builds the cause chain: the sentinel, the provider's error
// (which unwraps to the same sentinel) and the transport error.
func joinCause(sentinel error, apiErr *APIError, transport error) error {
	var parts []error
	if apiErr != nil {
		e := *apiErr
		e.kind = sentinel
		parts = append(parts, &e)
	} else if sentinel != nil {
		parts = append(parts, sentinel)
	}
	if transport != nil {
		parts = append(parts, transport)
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	return fmt.Errorf("%w: %w", parts[0], parts[1])
}

func stateOf(k Kind) State {
	if k == KindPending {
		return StatePending
	}
	return StateSucceeded
}

// storeWriteTimeout bounds a close or release that outlives its caller.
const storeWriteTimeout = 5 * time.Second

// storeCtx keeps recording an outcome when the caller has stopped waiting:
// the charge happened whether or not anyone still listens.
func storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), storeWriteTimeout)
}

// close records a known outcome, whoever holds the lease by now (no
// LeaseOwner: the outcome is a fact). A failure here is logged, not returned:
// the charge's outcome is already known to the caller, and a lost close
// only reopens the intent, which the next call settles by replay.
func (c *Client) close(ctx context.Context, rec Record, st State, out *storedOutcome) {
	ctx, cancel := storeCtx(ctx)
	defer cancel()
	out.SettledAt = c.now().UTC()
	raw, err := json.Marshal(out)
	if err == nil {
		ref := ""
		if out.Charge != nil {
			ref = out.Charge.ID
		}
		err = c.store.Resolve(ctx, Resolution{Namespace: rec.Namespace, IntentID: rec.IntentID, Key: rec.Key,
			State: st, ProviderRef: ref, Result: raw, At: c.now().UTC().Truncate(time.Microsecond)})
	}
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not record outcome; the intent stays open",
			slog.String("intent", rec.IntentID), slog.String("state", string(st)), slog.String("error", err.Error()))
	}
}

// release gives the intent's lease back, keeping it open. It names this
// instance as the lease owner, so a release that comes after the lease ran
// out and another instance took the intent over changes nothing
// (ErrLeaseLost) instead of freeing the new holder's lease. That is
// expected after a takeover and logged at debug level only.
func (c *Client) release(ctx context.Context, rec Record) {
	ctx, cancel := storeCtx(ctx)
	defer cancel()
	err := c.store.Resolve(ctx, Resolution{Namespace: rec.Namespace, IntentID: rec.IntentID, Key: rec.Key,
		State: StateOpen, At: c.now().UTC().Truncate(time.Microsecond), LeaseOwner: c.owner})
	switch {
	case errors.Is(err, ErrLeaseLost):
		c.log.LogAttrs(ctx, slog.LevelDebug, "idempay: lease already lost; nothing to release",
			slog.String("intent", rec.IntentID))
	case err != nil:
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not release lease",
			slog.String("intent", rec.IntentID), slog.String("error", err.Error()))
	}
}

// fromStore answers from the intent's stored outcome, without a request:
// a settled intent, or a pending one when the provider cannot look it up.
func (c *Client) fromStore(rec Record) (*Charge, error) {
	var out storedOutcome
	err := json.Unmarshal(rec.Result, &out)
	switch {
	case err == nil && rec.State == StateFailed:
		sentinel := ErrDeclined
		if out.Kind == KindInvalid {
			sentinel = ErrInvalidRequest
		}
		return nil, &ChargeError{IntentID: rec.IntentID, Key: rec.Key, Outcome: OutcomeFailed,
			Err: joinCause(sentinel, out.Refusal, nil)}
	case err == nil && out.Charge != nil:
		ch := *out.Charge
		ch.Replayed, ch.ReplayedFrom, ch.Attempts = true, ReplayFromStore, 0
		return &ch, nil
	}
	return nil, &ChargeError{IntentID: rec.IntentID, Key: rec.Key, Outcome: OutcomeUnknown,
		Err: fmt.Errorf("%w: stored %s outcome unreadable", ErrStore, rec.State)}
}

// settlePending asks the provider how a pending charge ended, if it can
// look charges up. A lookup that cannot tell leaves the charge pending: the
// stored pending charge is the answer, as it is for providers with no
// lookup.
func (c *Client) settlePending(ctx context.Context, rec Record) (*Charge, error) {
	v, err := c.find(ctx, rec)
	if err == nil && settles(v.Kind) {
		return c.concludeLookup(ctx, rec, v)
	}
	if err != nil && !errors.Is(err, ErrNoLookup) {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: lookup of a pending charge failed",
			slog.String("intent", rec.IntentID), slog.String("error", err.Error()))
	}
	c.release(ctx, rec)
	return c.fromStore(rec)
}

// settleExpired handles an unresolved key past the retention window: it is
// never resent; the provider is asked if it can be, else the caller must
// reconcile.
func (c *Client) settleExpired(ctx context.Context, rec Record) (*Charge, error) {
	v, err := c.find(ctx, rec)
	if err == nil && settles(v.Kind) {
		return c.concludeLookup(ctx, rec, v)
	}
	c.release(ctx, rec)
	cause := fmt.Errorf("%w: reserved %s", ErrKeyExpired, rec.CreatedAt.Format(time.RFC3339))
	if err != nil {
		cause = fmt.Errorf("%w; lookup: %w", cause, err) // e.g. two charges found for one intent
	}
	return nil, &ChargeError{IntentID: rec.IntentID, Key: rec.Key, Outcome: OutcomeUnknown, Err: cause}
}

// concludeLookup settles an intent from a lookup's verdict; anything but a
// found charge leaves it open and unknown.
func (c *Client) concludeLookup(ctx context.Context, rec Record, v Verdict) (*Charge, error) {
	f := &flight{c: c, rec: rec, req: ChargeRequest{IntentID: rec.IntentID}, settled: &v}
	f.complete(&v, nil, nil)
	if !settles(v.Kind) {
		c.release(ctx, rec)
		return nil, &ChargeError{IntentID: rec.IntentID, Key: rec.Key, Outcome: OutcomeUnknown,
			Err: joinCause(nil, v.Err, nil)}
	}
	return c.conclude(ctx, f, v, nil)
}
