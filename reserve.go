package idempay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// maxReserveSteps bounds how many attempts one call may try to begin: a
// new attempt is raced by another instance's at most once in practice.
const maxReserveSteps = 3

// execute reserves the operation's current attempt, or begins a new one
// after a definite failure, then sends or answers from the store.
func (c *Client) execute(ctx context.Context, op operation, prog *progress) (*Charge, error) {
	if err := op.prepare(ctx); err != nil {
		return nil, err
	}
	s := op.slot()
	attempt := 1
	var history []PastAttempt
	for range maxReserveSteps {
		key, err := c.attemptKey(s, attempt, history)
		if err != nil {
			return nil, err
		}
		claim, res, err := c.claims.Reserve(ctx, ReserveRequest{Namespace: s.namespace, ID: s.id,
			Attempt: attempt, Key: key, Fingerprint: s.fp})
		if err != nil {
			// Nothing was sent by this call, but without the record nobody
			// can tell whether an earlier call (or instance) sent a key.
			return nil, &ChargeError{IntentID: s.id, Outcome: OutcomeUnknown,
				Err: fmt.Errorf("%w: reserve: %w", ErrStore, err)}
		}
		rec := res.Record
		prog.setKey(rec.Key)
		if claim != nil {
			prog.claim.Store(claim)
			return c.claimed(ctx, op, claim, res, prog)
		}
		if past, ok := refusedBefore(rec, s.fp); ok {
			// These very parameters were refused by an earlier attempt
			// (another came between): the same request answers the same
			// refusal, never a new attempt (a single-use token would be
			// sent twice).
			return c.fromStore(ctx, op, past)
		}
		if !c.mayBeginAttempt(rec, s.fp) {
			return c.unclaimed(ctx, op, rec)
		}
		attempt, history = rec.Attempt+1, append(rec.History, rec.Past())
	}
	return nil, &ChargeError{IntentID: s.id, Key: prog.Key(), Outcome: OutcomeUnknown,
		Err: fmt.Errorf("%w: the attempts moved on while this call reserved", ErrInProgress)}
}

// attemptKey is the key of the attempt this call may begin: the caller's,
// unless an earlier attempt of the record carried it, or a new one.
//
// A key names one attempt for good, even one that never reached the
// provider: its failure may already have been told under that key (a
// guarded BFF stores "declined" for the frontend's key and replays it), so
// a later attempt that charged under it would make that answer false.
// After a failure, a new attempt needs a new key: a caller's BaseKey
// derives it (AttemptKey), a caller's Key is refused.
func (c *Client) attemptKey(s opSlot, attempt int, history []PastAttempt) (string, error) {
	if s.key != "" {
		key, field := s.key, "Key"
		if s.base {
			key, field = AttemptKey(s.key, attempt), "BaseKey"
		}
		i := slices.IndexFunc(history, func(p PastAttempt) bool { return p.Key == key })
		if i >= 0 {
			return "", &ChargeError{IntentID: s.id, Outcome: OutcomeFailed,
				Err: invalid(field, "was the key of attempt %d of %q, which failed; a new attempt needs a new key", history[i].Attempt, s.id)}
		}
		return key, nil
	}
	key := c.newKey()
	if err := ValidateKey(key); err != nil {
		return "", &ChargeError{IntentID: s.id, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("%w: Config.NewKey made a bad key: %w", ErrConfig, err)}
	}
	return key, nil
}

// mayBeginAttempt reports whether a call with fingerprint fp may begin a
// new attempt over rec: rec failed, and either the call brings other
// parameters (another card) or the failure was not a refusal the provider
// keeps for these parameters (nothing reached it), so trying again cannot
// replay it.
func (c *Client) mayBeginAttempt(rec Record, fp string) bool {
	if rec.State != StateFailed {
		return false
	}
	if rec.Fingerprint != fp {
		return true
	}
	var out storedOutcome
	if json.Unmarshal(rec.Result, &out) != nil {
		return false
	}
	return out.LocalRefusal != "" || (out.Kind != KindDeclined && out.Kind != KindInvalid)
}

// refusedBefore finds an earlier attempt of a failed record, made with
// fingerprint fp, that the provider refused (a decline, an invalid
// request): it returns the record as that attempt left it.
func refusedBefore(rec Record, fp string) (Record, bool) {
	if rec.State != StateFailed || rec.Fingerprint == fp {
		return Record{}, false // the current attempt answers for itself
	}
	for i := len(rec.History) - 1; i >= 0; i-- {
		p := rec.History[i]
		if p.Fingerprint != fp || p.State != StateFailed {
			continue
		}
		var out storedOutcome
		if json.Unmarshal(p.Result, &out) == nil && out.LocalRefusal == "" && (out.Kind == KindDeclined || out.Kind == KindInvalid) {
			past := rec
			past.Attempt, past.Key, past.Fingerprint, past.State = p.Attempt, p.Key, p.Fingerprint, p.State
			past.CreatedAt, past.ClosedAt, past.ProviderRef, past.Result = p.CreatedAt, p.ClosedAt, p.ProviderRef, p.Result
			return past, true
		}
	}
	return Record{}, false
}

// staleResume is the age, on the store's clock, from which a key an earlier
// call reserved is looked up at the provider before it is resent, whatever
// the provider: the store's clock may have been set back while nobody read
// it (a power cut, an NTP step on the database's host), and nothing in the
// store can show such a step, so an age read young may be one the provider
// has already forgotten the key at, and would execute it again. From an
// hour on, a step back would have to exceed the retention less an hour to
// slip a forgotten key past both checks. A younger resume (a retry after a
// crash, minutes later) is sent as it is: asking first would cost every
// takeover a lookup for a risk only a day-long step carries.
const staleResume = time.Hour

// claimed goes on with a record this flight holds the lease of.
func (c *Client) claimed(ctx context.Context, op operation, claim *Claim, res Reservation, prog *progress) (*Charge, error) {
	rec := res.Record
	if err := c.saveStoreClock(ctx); err != nil {
		c.release(ctx, claim)
		return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown, Err: err}
	}
	age, known := claim.attemptAge(res)
	if known && !res.Created && age < c.retention && rec.State != StatePending {
		// Young on the store's clock: unless the fleet saw that clock step
		// back since the key was reserved (storeclock.go).
		known = c.ageTrusted(ctx, rec)
	}
	switch {
	case rec.State == StatePending:
		return c.settlePending(ctx, op, claim, rec)
	case !res.Created && (!known || age >= c.retention):
		// Past retention, or of an age the store's clock can no longer
		// tell (it stepped back): never resent.
		return c.settleExpired(ctx, op, claim, rec, known)
	case res.Unproven && rec.Attempt == 1 && len(rec.History) == 0:
		// The store lost acknowledged writes lately: this first attempt
		// may stand for an intent whose record, and key, were lost.
		if ch, err, done := c.proveNew(ctx, op, claim, rec); done {
			return ch, err
		}
	}
	f := &flight{c: c, op: op, rec: rec, claim: claim, created: res.Created, prog: prog,
		stale: !res.Created && age >= staleResume}
	if err := op.beforeSend(ctx, claim, res); err != nil {
		return c.notSent(ctx, f, err)
	}
	v, cause := f.run()
	c.writeJournal(ctx, f)
	c.keepStoreClock(ctx, rec) // a step a renewal saw, for the fleet
	return c.conclude(ctx, f, v, cause)
}

// unclaimed answers a call that did not get the lease: from the store when
// the record is settled, else with why it cannot go on.
func (c *Client) unclaimed(ctx context.Context, op operation, rec Record) (*Charge, error) {
	fp := op.slot().fp
	switch {
	case rec.State == StateSucceeded:
		ch, err := c.fromStore(ctx, op, rec)
		if ch != nil {
			ch.ParamsDiffer = rec.Fingerprint != fp
		}
		return ch, err
	case rec.State == StateFailed:
		return c.fromStore(ctx, op, rec)
	case rec.Fingerprint != fp:
		err := &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: outcomeOfState(rec.State),
			Err: fmt.Errorf("%w: attempt %d, %s, with other parameters; settle it before trying again", ErrAttemptOpen, rec.Attempt, rec.State)}
		if rec.State == StatePending {
			// What the customer must be shown is the open attempt's.
			ch, _ := c.fromStore(ctx, op, rec)
			return ch, err
		}
		return nil, err
	case rec.State == StatePending:
		return c.fromStore(ctx, op, rec) // another flight is settling it; its last known state is pending
	}
	return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeUnknown,
		Err: fmt.Errorf("%w: leased by another flight until %s", ErrInProgress, rec.LeaseUntil.Format(time.RFC3339))}
}

// outcomeOfState is the outcome an unsettled record stands for.
func outcomeOfState(s State) Outcome {
	if s == StatePending {
		return OutcomePending
	}
	return OutcomeUnknown
}

// AttemptKey is the idempotency key of attempt n of the user action whose
// key is base (ChargeRequest.BaseKey): base itself for attempt 1; for a
// later attempt, a key of its own derived from base and n alone, so that
// every instance of a service derives the same one, and no two attempts
// (nor two bases) share one. It is at most 59 characters whatever the
// base's length.
func AttemptKey(base string, n int) string {
	if n <= 1 {
		return base
	}
	sum := sha256.Sum256([]byte("idempay attempt key\x00" + base + "\x00" + strconv.Itoa(n)))
	return "attempt-" + strconv.Itoa(n) + "-" + hex.EncodeToString(sum[:20])
}
