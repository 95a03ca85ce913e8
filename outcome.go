package idempay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// conclude turns the deciding verdict of a flight into the caller's answer
// and the intent's state in the store. It is where "never say failed when
// the truth is unknown" is enforced: a refusal counts as definite only if
// nothing before it could have moved money (the key was new, no earlier
// attempt may have reached the provider, and the lease never lapsed), and
// such a failure is recorded only while this flight still holds the lease;
// a decline is final whatever came before, because the provider stores it
// for the key and so speaks for every earlier attempt.
func (c *Client) conclude(ctx context.Context, f *flight, v Verdict, cause error) (*Charge, error) {
	fail := func(o Outcome, sentinel error) (*Charge, error) {
		return nil, &ChargeError{IntentID: f.rec.ID, Key: f.rec.Key, Outcome: o, Requests: f.sent(),
			Err: joinCause(sentinel, v.Err, cause)}
	}
	earlier := f.mayHaveCharged(max(len(f.attempts)-1, 0))
	switch v.Kind {
	case KindSucceeded, KindPending:
		ch := f.answer(v)
		c.closeWith(ctx, f.op, f.claim, f.rec, stateOf(v.Kind), &storedOutcome{Charge: ch, Kind: v.Kind})
		return f.op.answer(ctx, ch)
	case KindDeclined:
		if err := c.closeWith(ctx, f.op, f.claim, f.rec, StateFailed, &storedOutcome{Refusal: v.Err, Kind: v.Kind}); err != nil {
			// Declined, but the store still says open: a caller told
			// "failed" would try another card and be refused for the
			// open attempt. Unknown sends it back to this request, whose
			// resend the provider answers with the stored decline.
			return fail(OutcomeUnknown, fmt.Errorf("%w: decline not recorded: %w", ErrStore, err))
		}
		return fail(OutcomeFailed, ErrDeclined)
	case KindInvalid, KindConfig, KindNotSent, KindRateLimited:
		if earlier {
			break
		}
		// Nothing reached the part that moves money, as far as this flight
		// can tell; the store's owner check makes it certain: had another
		// flight held the lease since, the failure is not recorded.
		if err := c.failIfHeld(ctx, f.op, f.claim, f.rec, &storedOutcome{Refusal: v.Err, Kind: v.Kind}); err != nil {
			return fail(OutcomeUnknown, fmt.Errorf("%w: failure not recorded: %w", ErrOutcomeUnknown, err))
		}
		return fail(OutcomeFailed, failedSentinel(v.Kind))
	}
	c.release(ctx, f.claim)
	if ch, err, ok := c.settledMeanwhile(ctx, f); ok {
		return ch, err
	}
	return fail(OutcomeUnknown, unknownCause(v))
}

// settledMeanwhile answers from the store when the flight lost its lease
// because someone else settled the record while it ran (Settle from a
// webhook, another instance): the store knows better than "unknown".
func (c *Client) settledMeanwhile(ctx context.Context, f *flight) (*Charge, error, bool) {
	if !f.claim.Lapsed() {
		return nil, nil, false
	}
	rec, err := c.store.Load(context.WithoutCancel(ctx), f.rec.Namespace, f.rec.ID)
	if err != nil || rec.Key != f.rec.Key || !rec.State.Closed() {
		return nil, nil, false
	}
	ch, err := c.fromStore(ctx, f.op, rec)
	return ch, err, true
}

// answer completes the charge a verdict carries with what this flight knows.
func (f *flight) answer(v Verdict) *Charge {
	ch := *v.Charge
	ch.Requests = f.sent()
	ch.Attempt = f.rec.Attempt
	if f.settled != nil {
		ch.Replayed, ch.ReplayedFrom = true, ReplayFromLookup
	} else if v.Replayed {
		ch.Replayed, ch.ReplayedFrom = true, ReplayFromServer
	}
	return &ch
}

// sent is how many requests this call has sent so far.
func (f *flight) sent() int {
	if f.prog == nil {
		return 0
	}
	return int(f.prog.sent.Load())
}

// answerPending is the return for a succeeded or pending receipt: a
// pending one comes with an error, so that a caller who only checks err
// never ships an order that is not paid.
func answerPending(ch *Charge) (*Charge, error) {
	if ch.State == StatePending {
		return ch, pendingError(ch, ErrPending)
	}
	return ch, nil
}

func pendingError(ch *Charge, cause error) error {
	return &ChargeError{IntentID: ch.IntentID, Key: ch.Key, Outcome: OutcomePending, Requests: ch.Requests, Err: cause}
}

func failedSentinel(k Kind) error {
	switch k {
	case KindDeclined:
		return ErrDeclined
	case KindInvalid:
		return ErrInvalidRequest
	case KindConfig:
		return ErrConfig
	case KindNotFound:
		return ErrKeyExpired // the provider proved no charge under the expired key
	}
	return ErrUnreachable
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

// closeWith records a known outcome through the claim. With no claim (a
// Settle while a flight holds the lease) it records a success only: that
// closes the record for good, so freeing the flight's lease with it lets no
// one else send, and the flight, its renewal refused, answers from the
// store. Pending or failed it leaves to the flight, which learns it from the
// provider: recorded, either would free the lease to another sender. The
// operation records the outcome in the intent's ledger first (record); a
// failure there leaves the record open. A failure to record is logged and returned: a lost
// success only reopens the intent, which the next call settles by replay,
// but a lost failure must not be told as a failure (see conclude).
func (c *Client) closeWith(ctx context.Context, op operation, claim *Claim, rec Record, st State, out *storedOutcome) error {
	if claim == nil && st != StateSucceeded {
		return nil
	}
	raw, ref := out.encode()
	// The operation's ledger learns the outcome first: once the record is
	// closed, the store's retention may delete it.
	err := op.record(context.WithoutCancel(ctx), rec, st, out)
	switch {
	case err != nil:
	case claim != nil:
		err = claim.Close(ctx, st, ref, raw)
	default:
		err = c.recordSuccess(ctx, rec, ref, raw)
	}
	if err != nil && !errors.Is(err, ErrAlreadyResolved) {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not record outcome; the intent stays open",
			slog.String("intent", rec.ID), slog.String("state", string(st)), slog.String("error", err.Error()))
		if claim != nil {
			_ = claim.abandon(ctx) // give the lease back, so the next call resumes at once
		}
		return err
	}
	return nil
}

// recordSuccess closes a record as succeeded without holding its lease: a
// fact, whoever holds the lease.
func (c *Client) recordSuccess(ctx context.Context, rec Record, ref string, raw []byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.claims.withDefaults().WriteTimeout)
	defer cancel()
	return c.store.Resolve(ctx, Resolution{Namespace: rec.Namespace, ID: rec.ID, Key: rec.Key,
		State: StateSucceeded, ProviderRef: ref, Result: raw})
}

// failIfHeld records a failure that rests on "nothing reached the
// provider", only if the flight still holds its lease; then the
// operation's ledger learns it (see record).
func (c *Client) failIfHeld(ctx context.Context, op operation, claim *Claim, rec Record, out *storedOutcome) error {
	raw, _ := out.encode()
	if err := claim.CloseIfHeld(ctx, StateFailed, raw); err != nil {
		return err
	}
	c.recordAfter(ctx, op, rec, StateFailed)
	return nil
}

// recordAfter tells the operation's ledger of a failure already closed in
// its record. Lost, the entry stays open and counts: logged, not returned.
func (c *Client) recordAfter(ctx context.Context, op operation, rec Record, st State) {
	if err := op.record(context.WithoutCancel(ctx), rec, st, nil); err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not write a failure into the ledger; its amount stays counted",
			slog.String("intent", rec.ID), slog.String("error", err.Error()))
	}
}

// release gives the flight's lease back, keeping the intent open. After a
// takeover the store refuses it (ErrLeaseLost): expected, logged at debug.
func (c *Client) release(ctx context.Context, claim *Claim) {
	err := claim.Release(ctx)
	switch {
	case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrClaimFinished), errors.Is(err, ErrAlreadyResolved):
		c.log.LogAttrs(ctx, slog.LevelDebug, "idempay: lease already lost; nothing to release",
			slog.String("intent", claim.Record().ID))
	case err != nil:
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not release lease",
			slog.String("intent", claim.Record().ID), slog.String("error", err.Error()))
	}
}

// fromStore answers from the record's stored outcome, without a request.
func (c *Client) fromStore(ctx context.Context, op operation, rec Record) (*Charge, error) {
	var out storedOutcome
	err := json.Unmarshal(rec.Result, &out)
	switch {
	case err == nil && rec.State == StateFailed && out.LocalRefusal != "":
		return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeFailed,
			Err: storedRefusal(out.LocalRefusal, out.Reason)}
	case err == nil && rec.State == StateFailed:
		return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: OutcomeFailed,
			Err: c.refusalCause(ctx, op, rec, out.Kind, out.Refusal)}
	case err == nil && out.Charge != nil && (rec.State == StateSucceeded || rec.State == StatePending):
		ch := *out.Charge
		ch.State = rec.State
		ch.Replayed, ch.ReplayedFrom, ch.Requests = true, ReplayFromStore, 0
		return op.answer(ctx, &ch)
	}
	return nil, &ChargeError{IntentID: rec.ID, Key: rec.Key, Outcome: outcomeOfState(rec.State),
		Err: fmt.Errorf("%w: stored %s outcome unreadable", ErrStore, rec.State)}
}

// storedOutcome is what a settled or pending record keeps in Record.Result,
// so a later call answers without a request. Charge is the engine's
// receipt whatever the operation (for a refund, the provider's refund).
type storedOutcome struct {
	Charge  *Charge   `json:"charge,omitempty"`
	Refusal *APIError `json:"refusal,omitempty"`
	Kind    Kind      `json:"kind"`
	// LocalRefusal (a code of refusalCodes) and Reason are set for an
	// attempt the Client refused before its first byte (see refusal):
	// nothing reached the provider. Stored as "guard", its former name.
	LocalRefusal string `json:"guard,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// encode returns the outcome as stored and the provider reference it names.
func (o *storedOutcome) encode() ([]byte, string) {
	raw, err := json.Marshal(o)
	if err != nil {
		// Charges and API errors are strings and numbers: this cannot
		// happen, and an unreadable Result answers "unknown" anyway.
		raw = nil
	}
	if o.Charge != nil {
		return raw, o.Charge.ID
	}
	return raw, ""
}

// notSent ends a flight that its operation stopped before the first byte
// (beforeSend failed). The Client's own refusal proves that nothing was ever
// sent under the key (see refusal): it is recorded as a failure while this
// flight holds the lease. Anything else leaves the record open, since an
// earlier call may have sent its key.
func (c *Client) notSent(ctx context.Context, f *flight, err error) (*Charge, error) {
	fail := func(o Outcome, cause error) (*Charge, error) {
		return nil, &ChargeError{IntentID: f.rec.ID, Key: f.rec.Key, Outcome: o, Err: cause}
	}
	var a *errAnswered
	if errors.As(err, &a) {
		return c.answerBefore(ctx, f, a)
	}
	var r *refusal
	if !errors.As(err, &r) {
		c.release(ctx, f.claim)
		return fail(OutcomeUnknown, fmt.Errorf("idempay: not sent: %w", err))
	}
	raw, _ := (&storedOutcome{Kind: KindInvalid, LocalRefusal: refusalCode(r.err), Reason: r.err.Error()}).encode()
	if cerr := f.claim.CloseIfHeld(ctx, StateFailed, raw); cerr != nil {
		return fail(OutcomeUnknown, fmt.Errorf("%w; refusal not recorded: %w", r.err, cerr))
	}
	return fail(OutcomeFailed, r.err)
}
