package idempay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Reconciler settles every open and pending record of a Client: charges,
// then refunds, captures and cancels. Each record is settled through the
// Client's own calls, so under the same Claim protocol as everything else:
// a record leased by a running flight (here or on another instance, or by
// another Reconciler) is left to it and tried again after a backoff, and
// several Reconcilers may run at once over one store without ever sending
// one record twice at the same time.
//
// A record is settled by resending its stored key, when the service can
// give back the record's original request (ChargeRequest, RefundRequest)
// and the key is younger than the Client's KeyRetention on the store's
// clock (the Client never resends an older one: it looks it up instead);
// otherwise by looking it up at the provider (Settle, SettleRefund...),
// which needs a provider that can look the operation up.
//
// The zero Reconciler is not usable: Client is required. Run it as a
// goroutine of the service (Run), or once from the CLI (Reconcile).
type Reconciler struct {
	// Client is the client whose records are settled. Required.
	Client *Client
	// ChargeRequest, if set, returns the original request of an open
	// charge, read from where the service keeps its orders; ok false (or
	// a nil func) settles it by lookup only. The request must be the one
	// first sent: another is refused (ErrAttemptOpen) and reported.
	ChargeRequest func(ctx context.Context, rec Record) (req ChargeRequest, ok bool, err error)
	// RefundRequest does the same for an open refund. Captures and
	// cancels are settled by lookup.
	RefundRequest func(ctx context.Context, rec Record) (req RefundRequest, ok bool, err error)
	// Concurrency bounds the records settled at once. Default 4.
	Concurrency int
	// Tries bounds how often one record is tried in one pass. Default 4.
	Tries int
	// Backoff is the wait after a record's first unsettled try; it doubles
	// after each next one, up to MaxBackoff. Defaults 500 ms and 10 s.
	Backoff, MaxBackoff time.Duration
	// Progress, if set, is called after each record is done with, from the
	// goroutine that settled it (calls may be concurrent).
	Progress func(ReconcileProgress)
	// Logger receives a line per record not settled. Default: the
	// Client's.
	Logger *slog.Logger
}

// ReconcileProgress says how far a pass has come.
type ReconcileProgress struct {
	Done      int // records done with so far
	Settled   int // of which settled
	Unsettled int // of which still open or pending
}

// ReconcileItem is what a pass did with one record.
type ReconcileItem struct {
	// Kind is "charge", or the operation's type.
	Kind string `json:"kind"`
	// ID is the record's ID: the intent, or the operation's ID.
	ID string `json:"id"`
	// IntentID is the intent charged (an operation's intent, when known).
	IntentID string `json:"intent_id,omitempty"`
	Attempt  int    `json:"attempt"`
	Key      string `json:"key"`
	// Was is the record's state when the pass read it; State is its state
	// in the store after the pass.
	Was   State `json:"was"`
	State State `json:"state"`
	// Outcome is what the last try answered.
	Outcome Outcome `json:"outcome"`
	// By is how the last try went about it: "resend" (the stored key sent
	// again with the original request), "lookup", or "store" (settled
	// meanwhile by someone else: the store answered).
	By    string `json:"by"`
	Tries int    `json:"tries"`
	// Reason says why the record is still unsettled; empty once settled.
	Reason string `json:"reason,omitempty"`
	// Err is the last try's error, for errors.Is; not encoded.
	Err error `json:"-"`
}

// Settled reports whether the record's outcome is known now: succeeded or
// failed.
func (it ReconcileItem) Settled() bool { return it.State.Closed() }

// ReconcileReport is what one pass settled and what it could not, and why.
type ReconcileReport struct {
	Settled   []ReconcileItem `json:"settled"`
	Unsettled []ReconcileItem `json:"unsettled"`
}

// ErrReconcileIncomplete is returned by Reconcile, with its report, when a
// pass ended with records still unsettled.
var ErrReconcileIncomplete = errors.New("idempay: records left unsettled")

// Reconcile runs one pass over every open and pending record: it returns
// once each was settled or tried Tries times, or ctx ended. The error is
// nil when everything was settled, matches ErrReconcileIncomplete when
// some records are left (each with its reason in the report), and is ctx's
// error or a store error when the pass could not finish.
func (r *Reconciler) Reconcile(ctx context.Context) (*ReconcileReport, error) {
	if r.Client == nil {
		return nil, configErr("Reconciler.Client", "is nil")
	}
	work := make(chan recWork)
	rep := &ReconcileReport{}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for range cmp.Or(r.Concurrency, 4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				it := r.settleOne(ctx, w)
				mu.Lock()
				if it.Settled() {
					rep.Settled = append(rep.Settled, it)
				} else {
					rep.Unsettled = append(rep.Unsettled, it)
				}
				p := ReconcileProgress{Done: len(rep.Settled) + len(rep.Unsettled), Settled: len(rep.Settled), Unsettled: len(rep.Unsettled)}
				mu.Unlock()
				if r.Progress != nil {
					r.Progress(p)
				}
			}
		}()
	}
	err := r.list(ctx, work)
	close(work)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && len(rep.Unsettled) > 0 {
		err = fmt.Errorf("%w: %d of %d", ErrReconcileIncomplete, len(rep.Unsettled), len(rep.Settled)+len(rep.Unsettled))
	}
	return rep, err
}

// Run reconciles every interval until ctx ends, logging what each pass
// left; it returns ctx's cause.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) error {
	for {
		rep, err := r.Reconcile(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrReconcileIncomplete) {
			r.logger().LogAttrs(ctx, slog.LevelWarn, "idempay: reconcile pass failed", slog.String("error", err.Error()))
		} else if rep != nil && len(rep.Unsettled) > 0 {
			r.logger().LogAttrs(ctx, slog.LevelInfo, "idempay: reconcile pass left records unsettled",
				slog.Int("settled", len(rep.Settled)), slog.Int("unsettled", len(rep.Unsettled)))
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return context.Cause(ctx)
		}
	}
}

func (r *Reconciler) logger() *slog.Logger { return cmp.Or(r.Logger, r.Client.log) }

// recWork is one record to settle, with what it needs: an operation's
// intent and amount come from its intent's ledger.
type recWork struct {
	kind   string // "charge" or an OpType
	rec    Record
	ledger *LedgerOp // the operation's entry, when found
	intent string
	cur    string // the intent's currency, from its ledger
}

// list feeds every open and pending record to the workers: the charges,
// then the operations of each type.
func (r *Reconciler) list(ctx context.Context, work chan<- recWork) error {
	c := r.Client
	for rec, err := range c.Unresolved(ctx) {
		if err != nil {
			return err
		}
		if !feed(ctx, work, recWork{kind: "charge", rec: rec, intent: rec.ID}) {
			return ctx.Err()
		}
	}
	var index map[string]recWork // operation entries by type and ID
	reread := false              // read again once, for operations entered since
	for _, t := range []OpType{OpRefund, OpCapture, OpCancel} {
		for rec, err := range c.UnresolvedOps(ctx, t) {
			if err != nil {
				return err
			}
			id := string(t) + "\x00" + rec.ID
			if _, ok := index[id]; !ok && (index == nil || !reread) {
				reread = index != nil
				if index, err = r.opIndex(ctx); err != nil {
					return err
				}
			}
			w := index[id]
			w.kind, w.rec = string(t), rec
			if !feed(ctx, work, w) {
				return ctx.Err()
			}
		}
	}
	return nil
}

func feed(ctx context.Context, work chan<- recWork, w recWork) bool {
	select {
	case work <- w:
		return true
	case <-ctx.Done():
		return false
	}
}

// opIndex reads every intent's ledger for the entries of its operations:
// an operation's own record names neither its intent nor its amount, and
// the ledger entry is written before its first byte, so every operation
// that may have been sent has one.
func (r *Reconciler) opIndex(ctx context.Context) (map[string]recWork, error) {
	c := r.Client
	index := map[string]recWork{}
	for rec, err := range c.unresolved(ctx, c.ledgerNamespace()) {
		if err != nil {
			return nil, err
		}
		doc, err := decodeLedger(rec.Result)
		if err != nil || doc.Charge == nil {
			continue // reported for the operation: no entry found
		}
		for i := range doc.Ops {
			e := doc.Ops[i]
			index[string(e.Type)+"\x00"+e.OpID] = recWork{ledger: &e, intent: rec.ID, cur: doc.Charge.Currency}
		}
	}
	return index, nil
}

// settleOne tries one record until it is settled, a try says more tries
// cannot help, or the pass's tries run out, with a growing wait between.
func (r *Reconciler) settleOne(ctx context.Context, w recWork) ReconcileItem {
	it := ReconcileItem{Kind: w.kind, ID: w.rec.ID, IntentID: w.intent, Attempt: w.rec.Attempt,
		Key: w.rec.Key, Was: w.rec.State, State: w.rec.State, Outcome: outcomeOfState(w.rec.State)}
	wait := cmp.Or(r.Backoff, 500*time.Millisecond)
	for it.Tries < cmp.Or(r.Tries, 4) {
		it.Tries++
		by, err := r.try(ctx, w)
		it.By, it.Err, it.Outcome = by, err, OutcomeOf(err)
		if rec, lerr := r.Client.store.Load(context.WithoutCancel(ctx), w.rec.Namespace, w.rec.ID); lerr == nil {
			it.State, it.Attempt, it.Key = rec.State, rec.Attempt, rec.Key
		}
		if it.State.Closed() {
			if errors.Is(err, ErrInProgress) {
				// Another holder settled it while this try waited.
				it.By, it.Err = "store", nil
			}
			it.Outcome = outcomeOfClosed(it.State)
			break
		}
		if !worthAnotherTry(err) {
			break
		}
		if sleepCtx(ctx, wait) != nil {
			break
		}
		wait = min(wait*2, cmp.Or(r.MaxBackoff, 10*time.Second))
	}
	if !it.Settled() {
		it.Reason = reason(it)
		r.logger().LogAttrs(ctx, slog.LevelInfo, "idempay: record left unsettled",
			slog.String("kind", it.Kind), slog.String("id", it.ID), slog.String("state", string(it.State)),
			slog.String("reason", it.Reason))
	}
	return it
}

// outcomeOfClosed is what a closed record's state says of the money.
func outcomeOfClosed(s State) Outcome {
	if s == StateSucceeded {
		return OutcomeSucceeded
	}
	return OutcomeFailed
}

// try settles one record once, and says how it went about it.
func (r *Reconciler) try(ctx context.Context, w recWork) (by string, err error) {
	c := r.Client
	switch OpType(w.kind) {
	case "charge":
		if r.ChargeRequest != nil {
			req, ok, err := r.ChargeRequest(ctx, w.rec)
			if err != nil {
				return "resend", fmt.Errorf("idempay: reconcile: the service's request: %w", err)
			}
			if ok {
				ch, err := c.Charge(ctx, req)
				return byOf("resend", ch), err
			}
		}
		ch, err := c.Settle(ctx, w.rec.ID)
		return byOf("lookup", ch), err
	case OpRefund:
		if r.RefundRequest != nil {
			req, ok, err := r.RefundRequest(ctx, w.rec)
			if err != nil {
				return "resend", fmt.Errorf("idempay: reconcile: the service's request: %w", err)
			}
			if ok {
				_, err = c.Refund(ctx, req)
				return "resend", err
			}
		}
	}
	if w.ledger == nil {
		return "lookup", &OpError{Type: OpType(w.kind), OpID: w.rec.ID, Outcome: outcomeOfState(w.rec.State),
			Err: errNoLedgerEntry}
	}
	op := OpRequest{Type: OpType(w.kind), ID: w.rec.ID, IntentID: w.intent, Amount: w.ledger.Amount, Currency: w.cur}
	_, err = c.settleOp(ctx, op, "")
	return "lookup", err
}

// byOf is "store" for an answer from the store (someone else settled the
// record meanwhile: another instance, another reconciler), else by.
func byOf(by string, ch *Charge) string {
	if ch != nil && ch.ReplayedFrom == ReplayFromStore {
		return "store"
	}
	return by
}

// errNoLedgerEntry: an open operation for which no intent's ledger had an
// entry when the pass read them. The entry is written before the first
// byte, so if none was ever written nothing was sent; either way only the
// caller's own request (Refund again) can settle it.
var errNoLedgerEntry = errors.New("idempay: no ledger entry found for the operation; call it again with its request")

// errLookupNotFound: a lookup found nothing under the record's key. That
// proves nothing while the key may still arrive or be resent: the record
// stays open, and trying again at once would only find nothing again.
var errLookupNotFound = errors.New("idempay: lookup answered not_found")

// worthAnotherTry reports whether trying the record again in this pass may
// settle it: not when the provider cannot look it up, the request is
// refused, the key is too old to resend, or the client is closed.
func worthAnotherTry(err error) bool {
	for _, stop := range []error{ErrPending, ErrAuthorized, ErrNoLookup, ErrNotSupported, ErrAttemptOpen, ErrKeyExpired, ErrClosed,
		errNoLedgerEntry, errLookupNotFound, ErrConfig, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, stop) {
			return false
		}
	}
	var ve *ValidationError
	return !errors.As(err, &ve)
}

// reason says in a few words why a record is still unsettled.
func reason(it ReconcileItem) string {
	switch err := it.Err; {
	case it.State == StatePending && (err == nil || errors.Is(err, ErrPending)):
		return "pending at the provider: the customer or the provider has not finished"
	case err == nil:
		return "still " + string(it.State)
	case errors.Is(err, ErrNoLookup), errors.Is(err, ErrNotSupported):
		return "the provider cannot look it up, and the service gave no request to resend"
	case errors.Is(err, ErrInProgress):
		return "leased by a running flight (here or on another instance)"
	case errors.Is(err, ErrKeyExpired):
		return "key older than KeyRetention and the lookup could not tell: reconcile with the provider by hand"
	case errors.Is(err, errLookupNotFound):
		return "the provider shows nothing under its key (yet): settled by resending with the service's request"
	case errors.Is(err, ErrAttemptOpen):
		return "the service's request differs from the stored attempt"
	}
	return it.Err.Error()
}
