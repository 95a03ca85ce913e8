package idempaytest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay"
)

// FakeCharger is a scripted idempay.Charger for tests of code that takes a
// Charger and should not talk to any server. It keeps a record per intent
// the way a Client's KeyStore does, and every rule of the Client's that a
// caller can observe holds for it:
//
//   - Four outcomes, read with idempay.OutcomeOf. A success returns the
//     charge and a nil error. A pending charge returns the charge (State
//     idempay.StatePending, with its AuthorizeURL) and an
//     *idempay.ChargeError matching idempay.ErrPending, outcome pending.
//     Failed and unknown outcomes return a nil charge and an error, and so
//     does ErrAttemptOpen on a pending attempt, as from the Client.
//   - Bad input is refused first, with the bare *idempay.ValidationError
//     of ChargeRequest.Validate (a nil context is refused too, as field
//     "ctx"), and nothing is remembered. A context already done ends the
//     call with outcome unknown before the intent is looked up.
//   - Two requests are the same payment when every field but Key is equal,
//     the currency compared in any case and a nil map equal to an empty
//     one: the Client's fingerprint.
//   - An intent is one order; it may take several attempts, each with its
//     own key (the request's Key, or FakeAttemptKey), of which at most one
//     succeeds. Charge.Attempt says which attempt a charge belongs to.
//   - A succeeded intent answers every later call from the store, whatever
//     its parameters: its charge, Replayed, ReplayedFrom
//     idempay.ReplayFromStore, Requests 0, and ParamsDiffer set when the
//     call's parameters are not the ones that succeeded.
//   - After a refusal the provider keeps for the parameters (a decline, an
//     invalid request), the same parameters answer that refusal again from
//     the store (Requests 0); other parameters (another card) begin the
//     next attempt. After a failure that reached no provider (Unreachable,
//     or a Fail with outcome failed), any call begins the next attempt. Such
//     a failure, or an invalid request, on an attempt the call resumed is
//     unknown instead, and the attempt stays open: an earlier request with
//     its key may have charged. A decline is final either way.
//   - While the current attempt is unknown or pending, a call with other
//     parameters is refused with idempay.ErrAttemptOpen, the open attempt's
//     outcome (unknown or pending) and its key: money may still move under
//     it. A call with the same parameters resumes it with its key (a
//     pending one is never sent again: it is answered as pending until the
//     script settles it, see CompletePending and FailPending).
//   - A request Key is used only by a call that begins an attempt: on an
//     intent already reserved it is ignored and the stored key used, and a
//     Key that an earlier, failed attempt of the intent used is refused
//     with an *idempay.ChargeError (outcome failed) holding an
//     *idempay.ValidationError for field "Key".
//   - A charge held by WaitFor runs to its end whoever waits: a caller
//     whose context ends first gets idempay.ErrStoppedWaiting, outcome
//     unknown, with the attempt's key, and the next call gets the outcome.
//
// Calls that send are answered by the steps scripted with OnIntent, one
// step per call, and by a fresh success when the script is used up. Calls
// the Client answers without sending (from the store, ErrAttemptOpen, a
// refused key) spend no step. Its errors are built like the Client's, so
// errors.Is, errors.As and idempay.OutcomeOf answer alike for both;
// parity_test.go checks each rule above against a real Client.
//
// Record and Unresolved read the fake's records as Client.Record and
// Client.Unresolved read a store's, so code that takes an interface of
// those methods can be tested with the fake too.
//
// The zero value is ready for use. A FakeCharger is safe for concurrent
// use. It answers one call at a time, so concurrent calls for an intent get
// one fresh result and answers from the store after it; a Client differs
// in that identical callers joining one flight all get the fresh result,
// which the fake does too for a flight held by WaitFor. It must not be
// copied after first use.
type FakeCharger struct {
	mu      sync.Mutex
	scripts map[string][]step
	intents map[string]*fakeRecord
	flights map[string]*fakeFlight // flights held by WaitFor, by intent
	calls   []Call
}

var _ idempay.Charger = (*FakeCharger)(nil)

// Call is one call the FakeCharger answered, for assertions.
type Call struct {
	Request idempay.ChargeRequest // as passed in (maps copied)
	Charge  *idempay.Charge       // the charge returned: nil unless succeeded or pending
	Err     error                 // the error returned, if any
}

// fakeNamespace is the namespace of the fake's records: the provider
// "fake", account "default".
const fakeNamespace = "fake:default"

// fakeRecord is what the fake keeps of an intent, like a KeyStore record,
// plus what the Client decodes from its Result.
type fakeRecord struct {
	rec     idempay.Record
	charge  *idempay.Charge      // succeeded or pending: the charge to answer from the store
	failure *idempay.ChargeError // failed: the error the attempt ended with
	refused bool                 // failed by a refusal the provider keeps for the parameters
	// refusals holds, by fingerprint, the refusals the provider kept for
	// earlier attempts: those parameters answer them again.
	refusals map[string]*idempay.ChargeError
}

// remember notes what the failed current attempt leaves for later ones,
// as it goes to the history: its refusal, for its parameters. (Its key is
// in the history: it names that attempt for good.)
func (r *fakeRecord) remember() {
	if r.refused {
		if r.refusals == nil {
			r.refusals = map[string]*idempay.ChargeError{}
		}
		r.refusals[r.rec.Fingerprint] = r.failure
	}
}

// Charge answers req as described on FakeCharger.
func (f *FakeCharger) Charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	// One lock over the call, given up only while it waits for a flight
	// held by WaitFor, keeps Calls in the order the calls were answered,
	// which is the order a test reasons about.
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, err := f.charge(ctx, req)
	req.Metadata, req.Extra = maps.Clone(req.Metadata), maps.Clone(req.Extra)
	f.calls = append(f.calls, Call{Request: req, Charge: copyCharge(ch), Err: err})
	return ch, err
}

// charge answers one call in the Client's order: validation, the context,
// the flight of the intent, then its record. f.mu is held.
func (f *FakeCharger) charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	if ctx == nil {
		return nil, &idempay.ValidationError{Field: "ctx", Reason: "is a nil context.Context"}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s, ok := f.popBeforeStore(req.IntentID); ok {
		return nil, s.err
	}
	if err := ctx.Err(); err != nil {
		// The Client has not looked at its store: an earlier call may
		// have charged, so the outcome is unknown, and it knows no key.
		return nil, &idempay.ChargeError{IntentID: req.IntentID, Outcome: idempay.OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, intent not looked up: %w", err)}
	}
	fp := fakeFingerprint(req)
	for fl := f.flights[req.IntentID]; fl != nil; fl = f.flights[req.IntentID] {
		if fl.fp == fp && fl.key == req.Key+req.BaseKey {
			return f.join(ctx, req.IntentID, fl)
		}
		// Another flight of the intent, other parameters: this call comes
		// after it, as in the Client's flight group.
		if !f.waitOut(ctx, fl) {
			return nil, stoppedWaiting(req.IntentID, "", 0, ctx)
		}
	}
	return f.fromRecord(ctx, req, fp)
}

// fromRecord answers from the intent's record, or reserves an attempt and
// runs the next step on it. f.mu is held.
func (f *FakeCharger) fromRecord(ctx context.Context, req idempay.ChargeRequest, fp string) (*idempay.Charge, error) {
	r := f.intents[req.IntentID]
	fresh := true // this call begins the attempt: no earlier request has its key
	switch {
	case r == nil:
		r = f.begin(nil, req, fp, cmp.Or(req.Key, req.BaseKey, FakeKey(req.IntentID)))
	case r.rec.State == idempay.StateSucceeded:
		return r.fromStore(fp != r.rec.Fingerprint)
	case r.rec.State == idempay.StateFailed:
		if r.refused && r.rec.Fingerprint == fp {
			return nil, r.storedFailure()
		}
		if refusal, ok := r.refusals[fp]; ok {
			// Refused by an earlier attempt, another between: the same
			// refusal again, as the Client answers it.
			e := *refusal
			e.Requests = 0
			return nil, &e
		}
		key, err := r.nextKey(req)
		if err != nil {
			return nil, err
		}
		r = f.begin(r, req, fp, key)
	case r.rec.Fingerprint != fp:
		return r.attemptOpen()
	default:
		fresh = false
	}
	// Open (new, resumed) or pending with the same parameters: this call
	// holds the intent and runs a flight.
	gate, s, scripted := f.popFlight(req.IntentID, r.rec.State == idempay.StatePending)
	if gate == nil {
		return f.conclude(r, req, s, scripted, fresh)
	}
	fl := &fakeFlight{fp: fp, key: req.Key + req.BaseKey, recKey: r.rec.Key, attempts: s.sends(scripted, r.rec.State),
		after: s.after(phaseOf(r.rec.State), scripted), done: make(chan struct{})}
	if f.flights == nil {
		f.flights = map[string]*fakeFlight{}
	}
	f.flights[req.IntentID] = fl
	go func() {
		<-gate
		f.mu.Lock()
		fl.ch, fl.err = f.conclude(r, req, s, scripted, fresh)
		delete(f.flights, req.IntentID)
		f.mu.Unlock()
		close(fl.done)
	}()
	return f.join(ctx, req.IntentID, fl)
}

// begin reserves a new attempt of the intent: the first when r is nil,
// else the one after r's failed attempt, which goes to the history. f.mu
// is held.
func (f *FakeCharger) begin(r *fakeRecord, req idempay.ChargeRequest, fp, key string) *fakeRecord {
	now := fakeNow()
	if r == nil {
		r = &fakeRecord{rec: idempay.Record{Namespace: fakeNamespace, ID: req.IntentID}}
		if f.intents == nil {
			f.intents = map[string]*fakeRecord{}
		}
		f.intents[req.IntentID] = r
	} else {
		r.rec.History = append(r.rec.History, r.rec.Past())
		r.remember()
	}
	r.rec.Attempt++
	r.rec.Key, r.rec.Fingerprint, r.rec.State = key, fp, idempay.StateOpen
	r.rec.CreatedAt, r.rec.UpdatedAt, r.rec.ClosedAt = now, now, time.Time{}
	r.rec.ProviderRef, r.charge, r.failure, r.refused = "", nil, nil, false
	return r
}

// nextKey is the key of the attempt after r's failed one: the request's,
// unless an earlier attempt used it (the provider would answer that
// attempt's failure), else a new one.
func (r *fakeRecord) nextKey(req idempay.ChargeRequest) (string, error) {
	n := r.rec.Attempt + 1
	key, field := req.Key, "Key"
	switch {
	case req.BaseKey != "":
		key, field = idempay.AttemptKey(req.BaseKey, n), "BaseKey"
	case req.Key == "":
		return FakeAttemptKey(req.IntentID, n), nil
	}
	past := append(slices.Clone(r.rec.History), r.rec.Past())
	i := slices.IndexFunc(past, func(p idempay.PastAttempt) bool { return p.Key == key })
	if i >= 0 {
		return "", &idempay.ChargeError{IntentID: req.IntentID, Outcome: idempay.OutcomeFailed,
			Err: &idempay.ValidationError{Field: field, Reason: fmt.Sprintf(
				"was the key of attempt %d of this intent, which failed; a new attempt needs a new key", past[i].Attempt)}}
	}
	return key, nil
}

// conclude runs step s (or the default, when not scripted) on the intent's
// current attempt, records its outcome and answers; fresh says the call
// began the attempt. f.mu is held.
func (f *FakeCharger) conclude(r *fakeRecord, req idempay.ChargeRequest, s step, scripted, fresh bool) (*idempay.Charge, error) {
	if r.rec.State == idempay.StatePending && !scripted {
		// The provider cannot tell yet: the charge stays pending.
		return r.fromStore(false)
	}
	if !scripted {
		s = step{kind: stepSucceed}
	}
	a := s.answer(req, r, fresh)
	now := fakeNow()
	r.rec.UpdatedAt = now
	switch a.state {
	case idempay.StateSucceeded, idempay.StatePending:
		r.charge = copyCharge(a.charge)
		r.rec.ProviderRef = a.charge.ID
	case idempay.StateFailed:
		r.failure, r.refused = a.failure(), a.refused
	}
	if a.state != "" {
		r.rec.State = a.state
	}
	if r.rec.State.Closed() {
		r.rec.ClosedAt = now
	}
	return a.charge, a.err
}

// fromStore answers a succeeded or pending intent as the Client does from
// its store: nothing sent, so Requests is 0.
func (r *fakeRecord) fromStore(paramsDiffer bool) (*idempay.Charge, error) {
	ch := copyCharge(r.charge)
	ch.State = r.rec.State
	ch.Replayed, ch.ReplayedFrom, ch.Requests = true, idempay.ReplayFromStore, 0
	ch.ParamsDiffer = paramsDiffer && r.rec.State == idempay.StateSucceeded
	return answerCharge(ch)
}

// storedFailure is the refusal of a failed attempt, answered again from
// the store for the same parameters.
func (r *fakeRecord) storedFailure() error {
	e := *r.failure
	e.Requests = 0
	return &e
}

// attemptOpen refuses a call with other parameters while the current
// attempt is unknown or pending; a pending one comes with its charge.
func (r *fakeRecord) attemptOpen() (*idempay.Charge, error) {
	err := &idempay.ChargeError{IntentID: r.rec.ID, Key: r.rec.Key, Outcome: outcomeOfState(r.rec.State),
		Err: fmt.Errorf("%w: attempt %d, %s, with other parameters; settle it before trying again",
			idempay.ErrAttemptOpen, r.rec.Attempt, r.rec.State)}
	if r.rec.State == idempay.StatePending {
		ch, _ := r.fromStore(false)
		return ch, err
	}
	return nil, err
}

// answerCharge is the return of a succeeded or pending charge: a pending
// one comes with an error matching ErrPending, as from the Client.
func answerCharge(ch *idempay.Charge) (*idempay.Charge, error) {
	if ch.State == idempay.StatePending {
		return ch, &idempay.ChargeError{IntentID: ch.IntentID, Key: ch.Key, Outcome: idempay.OutcomePending,
			Requests: ch.Requests, Err: idempay.ErrPending}
	}
	return ch, nil
}

func outcomeOfState(s idempay.State) idempay.Outcome {
	if s == idempay.StatePending {
		return idempay.OutcomePending
	}
	return idempay.OutcomeUnknown
}

// fakeFlight is a flight held by WaitFor: the call that started it and
// every identical call wait for its answer; other calls of the intent wait
// for its end.
type fakeFlight struct {
	fp, key  string // the fingerprint and request Key it was started with
	recKey   string // the attempt's key, for a caller who stops waiting
	attempts int    // the requests it has on the wire
	after    phase  // where the script stands once it ends
	done     chan struct{}
	ch       *idempay.Charge
	err      error
}

// join waits for fl's answer, or for ctx to end: the flight goes on and
// records its outcome, and the caller is told it stopped waiting. f.mu is
// held, and given up while waiting.
func (f *FakeCharger) join(ctx context.Context, intentID string, fl *fakeFlight) (*idempay.Charge, error) {
	f.mu.Unlock()
	defer f.mu.Lock()
	select {
	case <-fl.done:
	case <-ctx.Done():
		select {
		case <-fl.done: // ended too: its answer says more than giving up
		default:
			return nil, stoppedWaiting(intentID, fl.recKey, fl.attempts, ctx)
		}
	}
	ch, err := answerCopy(fl.ch, fl.err)
	return ch, err
}

// waitOut waits for fl to end, or for ctx; f.mu is held, and given up
// while waiting.
func (f *FakeCharger) waitOut(ctx context.Context, fl *fakeFlight) bool {
	f.mu.Unlock()
	defer f.mu.Lock()
	select {
	case <-fl.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// answerCopy gives each caller its own Charge and ChargeError.
func answerCopy(ch *idempay.Charge, err error) (*idempay.Charge, error) {
	if ce, ok := err.(*idempay.ChargeError); ok {
		e := *ce
		err = &e
	}
	return copyCharge(ch), err
}

func stoppedWaiting(intentID, key string, sent int, ctx context.Context) error {
	return &idempay.ChargeError{IntentID: intentID, Key: key, Outcome: idempay.OutcomeUnknown, Requests: sent,
		Err: fmt.Errorf("%w: %w", idempay.ErrStoppedWaiting, context.Cause(ctx))}
}

// Record returns the fake's record of an intent, shaped as the
// idempay.Record a Client's KeyStore keeps (Client.Record): its current
// attempt, key, state and provider reference, and its earlier attempts in
// History; times are the wall clock's. Result, Creator and the lease are
// left empty. It returns an error matching idempay.ErrNotFound for an
// intent the fake never reserved.
func (f *FakeCharger) Record(ctx context.Context, intentID string) (idempay.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.intents[intentID]
	if !ok {
		return idempay.Record{}, fmt.Errorf("idempaytest: fake: %w: %q", idempay.ErrNotFound, intentID)
	}
	return r.copyRecord(), nil
}

// Unresolved yields every intent whose current attempt is open or pending,
// in the order of a KeyStore's ListOpen (when the attempt was reserved,
// then intent ID), as Client.Unresolved does. It yields ctx's error and
// stops if ctx is done.
func (f *FakeCharger) Unresolved(ctx context.Context) iter.Seq2[idempay.Record, error] {
	return func(yield func(idempay.Record, error) bool) {
		f.mu.Lock()
		var open []idempay.Record
		for _, r := range f.intents {
			if !r.rec.State.Closed() {
				open = append(open, r.copyRecord())
			}
		}
		f.mu.Unlock()
		slices.SortFunc(open, func(a, b idempay.Record) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		for _, rec := range open {
			if err := ctx.Err(); err != nil {
				yield(idempay.Record{}, err)
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

func (r *fakeRecord) copyRecord() idempay.Record {
	rec := r.rec
	rec.History = slices.Clone(rec.History)
	return rec
}

// fakeNow stamps records at the microsecond precision every store keeps.
func fakeNow() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Calls returns copies of every call answered so far, oldest first.
func (f *FakeCharger) Calls() []Call { return f.callsWhere(func(Call) bool { return true }) }

// CallsFor returns copies of the calls for one intent, oldest first.
func (f *FakeCharger) CallsFor(intentID string) []Call {
	return f.callsWhere(func(c Call) bool { return c.Request.IntentID == intentID })
}

// callsWhere copies the matching calls, so that a test changing what it
// got cannot change what the next assertion sees.
func (f *FakeCharger) callsWhere(match func(Call) bool) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if match(c) {
			c.Request.Metadata, c.Request.Extra = maps.Clone(c.Request.Metadata), maps.Clone(c.Request.Extra)
			c.Charge = copyCharge(c.Charge)
			out = append(out, c)
		}
	}
	return out
}

// FakeKey is the idempotency key FakeCharger makes for the first attempt
// of an intent, when the request that begins it carries no Key. It is
// FakeAttemptKey(intentID, 1).
func FakeKey(intentID string) string { return FakeAttemptKey(intentID, 1) }

// FakeAttemptKey is the idempotency key FakeCharger makes for attempt n
// of an intent (1 for the first), when the request that begins the
// attempt carries no Key. It depends on the intent ID and n only, so a
// test can assert on it.
func FakeAttemptKey(intentID string, n int) string {
	if n == 1 {
		return "idk_fake_" + digest("key", intentID)
	}
	return "idk_fake_" + digest("key", intentID+"\x00"+strconv.Itoa(n))
}

// FakeChargeID is the charge ID of FakeCharger's synthetic successes and
// pending charges for an intent. It depends on the intent ID only: an
// intent succeeds at most once.
func FakeChargeID(intentID string) string { return "ch_fake_" + digest("charge", intentID) }

func digest(purpose, s string) string {
	sum := sha256.Sum256([]byte(purpose + "\x00" + s))
	return hex.EncodeToString(sum[:12])
}

// fakeFingerprint says which requests are the same payment, by the rule
// the Client applies: every field but Key, the currency in any case, and
// an empty map the same as none. Encoding a struct (whose maps
// encoding/json sorts) makes equal requests encode alike.
func fakeFingerprint(r idempay.ChargeRequest) string {
	b, _ := json.Marshal(struct {
		Intent, Currency, Source, Customer, Desc, Return string
		Amount                                           int64
		Meta, Extra                                      map[string]string
	}{r.IntentID, strings.ToUpper(r.Currency), r.Source.Reveal(), r.Customer, r.Description, r.ReturnURL,
		r.Amount, nilIfEmpty(r.Metadata), nilIfEmpty(r.Extra)}) // cannot fail: strings, an int and string maps
	sum := sha256.Sum256(b) // hashed, as the Client does: the source is a secret
	return hex.EncodeToString(sum[:])
}

// nilIfEmpty makes an empty map encode as a nil one does.
func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func copyCharge(ch *idempay.Charge) *idempay.Charge {
	if ch == nil {
		return nil
	}
	c := *ch
	c.Raw = bytes.Clone(ch.Raw)
	return &c
}

// errorsAsCharge reports whether err holds a *ChargeError.
func errorsAsCharge(err error) bool {
	var ce *idempay.ChargeError
	return errors.As(err, &ce)
}
