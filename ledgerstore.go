package idempay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"
)

// The ledger of an intent is one record in the namespace <namespace>/ledger,
// identified by the intent ID. It never closes (a closed record could not
// be written again, and Expire would forget it): it is written only under
// its lease, by Claim.releaseIfUnchanged, which stores the new document,
// keeps the record open and frees the lease in one step checked against
// the owner, durably, and only if the lease held throughout and nobody
// wrote the record meanwhile.
const (
	ledgerFingerprint = "idempay-ledger-v1"
	ledgerKey         = "ledger"
	// ledgerTries bounds how often one reservation starts over after its
	// lease on the ledger was lost before it could write.
	ledgerTries = 3
	// ledgerMaxPoll caps the wait between two tries at a ledger leased to
	// another flight; holders keep it for a few store round trips.
	ledgerMaxPoll = 50 * time.Millisecond
)

// opNamespace is where the records of operations of type t live.
func (c *Client) opNamespace(t OpType) string { return c.namespace + "/" + string(t) }

func (c *Client) ledgerNamespace() string { return c.ledgerNS }

// ledgerClaims is how the ledger is leased: the client's lease, durable
// writes, and no age limit (the ledger is as old as the intent's first
// operation, and no key of it is ever sent).
func (c *Client) ledgerClaims() ClaimConfig {
	cfg := c.claims
	cfg.MaxAge, cfg.Durable = 0, true
	return cfg
}

// ordered reports whether the store keeps its writes in order
// (WriteOrderKeeper), so that a write made before another may be left
// unsynced when only the later one must be durable.
func (c *Client) ordered() bool {
	store := c.store
	if h, ok := store.(haltedStore); ok {
		store = h.KeyStore
	}
	k, ok := store.(WriteOrderKeeper)
	return ok && k.KeepsWriteOrder()
}

// claimLedger takes the lease of the intent's ledger, inserting the record
// if need be, and waits while another flight holds it: for about two
// leases, the longest a crashed holder can keep it. With lazy (only on a
// store that keeps its writes in order) neither the claim nor the write
// under it waits for a sync: for writes that need only be durable with
// the one the caller makes next.
func (c *Client) claimLedger(ctx context.Context, intentID string, lazy bool) (*Claim, error) {
	cfg := c.ledgerClaims()
	cfg.Durable = !lazy
	req := ReserveRequest{Namespace: c.ledgerNamespace(), ID: intentID, Attempt: 1, Key: ledgerKey,
		Fingerprint: ledgerFingerprint, Unsent: lazy}
	wait, waited := time.Millisecond, time.Duration(0)
	for {
		claim, res, err := cfg.Reserve(ctx, req)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w: ledger: %w", ErrStore, err)
		case claim != nil:
			return claim, nil
		case res.Record.State.Closed() || res.Record.Fingerprint != ledgerFingerprint:
			return nil, fmt.Errorf("%w: ledger record of %q is %s with fingerprint %q", ErrStore, intentID,
				res.Record.State, res.Record.Fingerprint)
		case waited > 2*cfg.Lease:
			return nil, fmt.Errorf("%w: the ledger of %q stayed leased for %s", ErrInProgress, intentID, waited)
		}
		if err := sleepCtx(ctx, wait/2+rand.N(wait)); err != nil {
			return nil, err
		}
		waited += wait
		wait = min(wait*2, ledgerMaxPoll)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// withLedger runs update on the intent's ledger under its lease, after
// bringing every unsettled entry up to its operation's record, and writes
// the result. It starts over if the lease was lost before the write.
// update's error is returned once the document is written (or could not
// be); a store's error otherwise.
func (c *Client) withLedger(ctx context.Context, intentID string, update func(*ledgerDoc) error) error {
	return c.withLedgerOf(ctx, intentID, false, func() (ledgerCharge, error) { return c.snapshot(ctx, intentID) }, update)
}

// withLedgerOf is withLedger for a ledger whose charge, if it does not
// hold one yet, is charge's answer; lazy as claimLedger's.
func (c *Client) withLedgerOf(ctx context.Context, intentID string, lazy bool, charge func() (ledgerCharge, error),
	update func(*ledgerDoc) error) error {
	for range ledgerTries {
		claim, err := c.claimLedger(ctx, intentID, lazy)
		if err != nil {
			return err
		}
		err = c.updateLedger(ctx, claim, charge, update)
		if !errors.Is(err, ErrLeaseLost) {
			return err
		}
	}
	return fmt.Errorf("%w: the ledger of %q was taken over %d times", ErrInProgress, intentID, ledgerTries)
}

func (c *Client) updateLedger(ctx context.Context, claim *Claim, charge func() (ledgerCharge, error),
	update func(*ledgerDoc) error) error {
	defer claim.abandonUnfinished() // a panic in the store or the update frees the ledger
	read := claim.Record().Result
	doc, err := decodeLedger(read)
	if err == nil && doc.Charge == nil {
		var ch ledgerCharge
		if ch, err = charge(); err == nil {
			doc.Charge = &ch
		}
	}
	if err == nil {
		err = c.reconcile(ctx, &doc)
	}
	if err != nil {
		_ = claim.Release(ctx)
		return err
	}
	uerr := update(&doc)
	written := doc.encode()
	if bytes.Equal(written, read) {
		// Nothing to write: give the lease back (the record as it was).
		_ = claim.Release(ctx)
		return uerr
	}
	werr := claim.releaseIfUnchanged(ctx, written, read)
	if werr != nil {
		// Not written, or written with the reply lost, or the lease did not
		// hold throughout: give the lease back if it is ours (the owner
		// check makes this harmless otherwise), so that the ledger is not
		// held until the lease runs out.
		_ = claim.abandon(ctx)
	}
	if werr != nil && !isRefusal(uerr) {
		// Lost (ErrLeaseLost: start over) or perhaps not written: nothing
		// may be sent on the strength of this update.
		return fmt.Errorf("%w: ledger write: %w", ErrStore, werr)
	}
	return uerr
}

// reconcile brings each unsettled entry up to its operation's record: the
// record is the truth of an attempt's state; the ledger holds its amount
// from before its first byte. An entry whose record cannot be found keeps
// counting: never under-count.
func (c *Client) reconcile(ctx context.Context, d *ledgerDoc) error {
	for i := range d.Ops {
		e := &d.Ops[i]
		if e.State.Closed() {
			continue
		}
		rec, err := c.store.Load(ctx, c.opNamespace(e.Type), e.OpID)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("%w: load %s %q: %w", ErrStore, e.Type, e.OpID, err)
		}
		settleEntry(e, rec)
	}
	return nil
}

// settleEntry brings e to the state rec holds for its attempt, current or
// past; an entry of an earlier record of the same ID (deleted by a sweep)
// keeps its own.
func settleEntry(e *LedgerOp, rec Record) {
	if currentAttempt(rec).is(*e) {
		e.State = rec.State
		if rec.State == StateSucceeded {
			e.Ref = rec.ProviderRef
		}
		return
	}
	for _, p := range rec.History {
		if (attemptID{attempt: p.Attempt, key: p.Key, reserved: p.CreatedAt}).is(*e) {
			e.State = p.State
			return
		}
	}
}

// snapshot reads what the operations need of the intent's settled charge.
// A charge that is not a settled success is a refusal.
func (c *Client) snapshot(ctx context.Context, intentID string) (ledgerCharge, error) {
	rec, err := c.store.Load(ctx, c.namespace, intentID)
	switch {
	case errors.Is(err, ErrNotFound):
		return ledgerCharge{}, c.noChargeHere(ctx, intentID)
	case err != nil:
		return ledgerCharge{}, fmt.Errorf("%w: load intent %q: %w", ErrStore, intentID, err)
	case rec.State != StateSucceeded:
		return ledgerCharge{}, refuse(fmt.Errorf("%w: intent %q is %s", ErrChargeNotSucceeded, intentID, rec.State))
	}
	var out storedOutcome
	if json.Unmarshal(rec.Result, &out) != nil || out.Charge == nil {
		return ledgerCharge{}, fmt.Errorf("%w: stored charge of intent %q unreadable", ErrStore, intentID)
	}
	return chargeFacts(out.Charge, rec), nil
}

// noChargeHere is the answer for an intent the store holds nothing of:
// neither the ledger nor the charge's record. Never charged in this
// namespace (a refusal), or charged before ledgers kept the charge and its
// record since deleted, or charged and the store lost it (a Redis without
// persistence, a failover that dropped writes). The provider tells the
// last apart when it can look the intent up under any key: a charge it
// shows makes the answer the store's error, not "never succeeded", which
// a caller would pass on to the customer. Not a refusal: what the lost
// store held (an earlier refund of this ID) is unknown.
func (c *Client) noChargeHere(ctx context.Context, intentID string) error {
	never := refuse(fmt.Errorf("%w: no charge of intent %q in the store, nor in its ledger",
		ErrChargeNotSucceeded, intentID))
	finder, ok := c.provider.(Finder)
	if !ok {
		return never
	}
	v, err := finder.FindCharge(withProbe(ctx, nil), c.hc, c.target, Record{Namespace: c.namespace, ID: intentID})
	switch {
	case errors.Is(err, ErrNoLookup):
		return never // the adapter cannot look intents up: the store's word stands
	case err != nil && unanswered(err):
		// The provider could not be asked: no proof either way.
		return fmt.Errorf("idempay: no charge of intent %q in the store, nor in its ledger, and the provider's lookup failed: %w", intentID, err)
	case err != nil || (v.Kind != KindSucceeded && v.Kind != KindPending):
		// The provider answered and showed no charge (an adapter's "no
		// proof", as Stripe's search that lags writes, is still no charge
		// shown): the store's word stands.
		return never
	}
	ref := ""
	if v.Charge != nil {
		ref = " (" + v.Charge.ID + ")"
	}
	c.log.LogAttrs(ctx, slog.LevelError, "idempay: the provider shows a charge the store holds no record of",
		slog.String("intent", intentID), slog.String("kind", v.Kind.String()))
	return fmt.Errorf("%w: the store holds no record of intent %q, whose charge%s the provider shows %s: the store lost it; reconcile before any operation on it",
		ErrStore, intentID, ref, v.Kind)
}

// unanswered reports whether a lookup's error means the provider gave no
// answer: it answered with an HTTP error (APIError), the request never
// completed (url.Error: refused, reset, timed out), or the call was given
// up.
func unanswered(err error) bool {
	var api *APIError
	var ue *url.Error
	return errors.As(err, &api) || errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// chargeFacts is what the ledger keeps of ch, the succeeded charge of
// rec's current attempt.
func chargeFacts(ch *Charge, rec Record) ledgerCharge {
	return ledgerCharge{Ref: ch.ID, Attempt: rec.Attempt, Amount: ch.Amount, Currency: strings.ToUpper(ch.Currency),
		Authorized: ch.Authorized, Key: rec.Key, Fingerprint: rec.Fingerprint, Status: ch.Status}
}

// ledgerRead says what readLedger adds to the ledger as stored.
type ledgerRead struct {
	// snapshot completes a ledger that holds no charge yet (no operation
	// was entered) from the charge's record, refusing an intent whose
	// charge is not a settled success; without it such a ledger is
	// answered with a nil Charge.
	snapshot bool
	// reconciled sets every open entry's state as its operation's record
	// says.
	reconciled bool
}

// readLedger reads the intent's ledger without a lease: the one place
// where a ledger is read.
func (c *Client) readLedger(ctx context.Context, intentID string, how ledgerRead) (ledgerDoc, error) {
	rec, err := c.store.Load(ctx, c.ledgerNamespace(), intentID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return ledgerDoc{}, fmt.Errorf("%w: ledger: %w", ErrStore, err)
	}
	doc, err := decodeLedger(rec.Result)
	if err != nil {
		return doc, err
	}
	if doc.Charge == nil {
		if !how.snapshot {
			return doc, nil
		}
		ch, err := c.snapshot(ctx, intentID)
		if err != nil {
			return doc, err
		}
		doc.Charge = &ch
	}
	if how.reconciled {
		err = c.reconcile(ctx, &doc)
	}
	return doc, err
}
