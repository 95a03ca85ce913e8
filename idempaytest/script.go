package idempaytest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"syscall"

	"github.com/idempay/idempay"
)

// IntentScript queues the answers of a FakeCharger to the next calls for
// one intent that send, one step per call, in the order the methods are
// called:
//
//	fake.OnIntent("order-1").Unknown().Succeed()
//
// answers the first call with an unknown outcome and the second, which
// resumes the attempt with its key, with a success; later calls are
// answered from the store. A call sends when the Client would send or look
// the charge up: it begins an attempt, resumes an unknown one, or asks
// about a pending one, with that attempt's parameters. Calls the Client
// answers without sending (a succeeded intent, the same declined request
// again, other parameters while an attempt is open, a refused key) spend no
// step. Once the script is used up, a call that sends succeeds (or, for a
// pending charge, stays pending).
//
// Each method returns the script for chaining. A step that could never be
// spent where it is put panics at once, naming the step, as a fixture built
// wrong should stop the test: any step after a success (but Invalid), a
// step other than CompletePending, FailPending, Invalid or WaitFor after a
// pending charge, and CompletePending or FailPending where no charge is
// pending. Get a script from FakeCharger.OnIntent; a zero IntentScript
// belongs to no fake, and its methods panic.
type IntentScript struct {
	f  *FakeCharger
	id string
}

// OnIntent returns the script of intentID. Scripts add up: calling
// OnIntent again appends to the same queue.
func (f *FakeCharger) OnIntent(intentID string) *IntentScript {
	return &IntentScript{f: f, id: intentID}
}

func (s *IntentScript) add(name string, st step) *IntentScript {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if err := st.mayFollow(s.f.scriptEnd(s.id)); err != nil {
		panic(fmt.Sprintf("idempaytest: OnIntent(%q).%s: %v", s.id, name, err))
	}
	if s.f.scripts == nil {
		s.f.scripts = map[string][]step{}
	}
	s.f.scripts[s.id] = append(s.f.scripts[s.id], st)
	return s
}

// Succeed answers with a fresh synthetic success: ID FakeChargeID, the
// attempt's key and number, the request's amount and currency, Requests 1.
// The intent has succeeded: every later call is answered from the store.
func (s *IntentScript) Succeed() *IntentScript { return s.add("Succeed", step{kind: stepSucceed}) }

// SucceedWith answers with ch, its zero fields filled as Succeed fills
// them; IntentID, Key and Attempt are always the intent's. Set Replayed
// and ReplayedFrom idempay.ReplayFromServer for a success the provider
// replayed. A ch whose State is idempay.StatePending is a pending charge,
// as with PendingWith; any State but that, StateSucceeded or none panics.
func (s *IntentScript) SucceedWith(ch idempay.Charge) *IntentScript {
	switch ch.State {
	case "", idempay.StateSucceeded:
		return s.add("SucceedWith", step{kind: stepSucceed, charge: &ch})
	case idempay.StatePending:
		return s.add("SucceedWith", step{kind: stepPending, charge: &ch})
	}
	panic(fmt.Sprintf("idempaytest: OnIntent(%q).SucceedWith: a charge in state %q is not a success", s.id, ch.State))
}

// Pending answers with a pending charge, as for 3-D Secure or a hosted
// payment page: the charge (State idempay.StatePending, Status "pending",
// ID FakeChargeID, Requests 1) and an *idempay.ChargeError with outcome
// pending matching idempay.ErrPending. The attempt stays open: a call
// with the same parameters is answered as pending from the store (Replayed,
// ReplayFromStore, Requests 0) until CompletePending or FailPending
// settles it; one with other parameters gets idempay.ErrAttemptOpen,
// outcome pending.
func (s *IntentScript) Pending() *IntentScript { return s.add("Pending", step{kind: stepPending}) }

// PendingWith answers as Pending, with ch: set AuthorizeURL to where the
// customer must go. Its zero fields are filled as Pending fills them; its
// State is always pending.
func (s *IntentScript) PendingWith(ch idempay.Charge) *IntentScript {
	return s.add("PendingWith", step{kind: stepPending, charge: &ch})
}

// CompletePending settles the pending charge as succeeded: the next call
// with its parameters gets it as the Client gets a charge it looked up
// (State succeeded, Replayed, ReplayedFrom idempay.ReplayFromLookup,
// Requests 0, no AuthorizeURL). It must follow a pending charge.
func (s *IntentScript) CompletePending() *IntentScript {
	return s.add("CompletePending", step{kind: stepComplete})
}

// FailPending settles the pending charge as declined with declineCode (the
// customer abandoned 3-D Secure, the voucher expired): the next call with
// its parameters gets the decline, outcome failed, Requests 0, shaped as
// Decline's but with the *idempay.APIError marked Replayed, as the Client
// marks what a lookup found. The attempt has failed: a call with other parameters begins
// the next one. It must follow a pending charge.
func (s *IntentScript) FailPending(declineCode string) *IntentScript {
	return s.add("FailPending", step{kind: stepFailPending, code: declineCode})
}

// Decline answers with a decline carrying declineCode (for example
// "insufficient_funds"): outcome failed, errors.Is idempay.ErrDeclined,
// and an *idempay.APIError (Provider "fake", status 402, type card_error,
// code card_declined) for errors.As. The attempt has failed: the same
// request gets the same decline from the store (Requests 0); a request
// with other parameters (another card) begins the next attempt.
func (s *IntentScript) Decline(declineCode string) *IntentScript {
	return s.add("Decline", step{kind: stepDecline, code: declineCode})
}

// Reject answers as a provider that refused the request as invalid:
// outcome failed, errors.Is idempay.ErrInvalidRequest, and an
// *idempay.APIError (Provider "fake", status 400, type
// invalid_request_error, code parameter_invalid, Param param). Like a
// decline, the refusal is answered again from the store for the same
// request, and other parameters begin the next attempt. On an attempt the
// call resumed (after Unknown or InProgress) the outcome is unknown
// instead, the *idempay.APIError matching no sentinel, and the attempt
// stays open: an earlier request with its key may have charged.
func (s *IntentScript) Reject(param string) *IntentScript {
	return s.add("Reject", step{kind: stepReject, field: param})
}

// Unknown answers with an unknown outcome: every answer was lost
// (errors.Is idempay.ErrOutcomeUnknown and io.EOF). The attempt stays
// open: the next call with its parameters resumes it with its key, one
// with other parameters gets idempay.ErrAttemptOpen, outcome unknown.
func (s *IntentScript) Unknown() *IntentScript { return s.add("Unknown", step{kind: stepUnknown}) }

// InProgress answers as a Client whose intent is leased by another
// instance sharing its store: outcome unknown, errors.Is
// idempay.ErrInProgress, nothing sent (Requests 0). The attempt stays open,
// as after Unknown. (A Client that got 409 on every attempt also says
// ErrInProgress, and carries the 409 as an *idempay.APIError; script that
// with Fail.)
func (s *IntentScript) InProgress() *IntentScript {
	return s.add("InProgress", step{kind: stepInProgress})
}

// Unreachable answers as a Client that never reached the provider:
// outcome failed, errors.Is idempay.ErrUnreachable and
// syscall.ECONNREFUSED. The attempt has failed without reaching anyone,
// so the next call, with the same parameters or others, begins the next
// attempt with a new key. On an attempt the call resumed (after Unknown or
// InProgress) the outcome is unknown instead (errors.Is
// syscall.ECONNREFUSED, not ErrUnreachable), and the attempt stays open:
// an earlier request with its key may have charged.
func (s *IntentScript) Unreachable() *IntentScript {
	return s.add("Unreachable", step{kind: stepUnreachable})
}

// Invalid answers with a bare *idempay.ValidationError for field
// (errors.Is idempay.ErrInvalidRequest, outcome failed), as the Client's
// provider adapter refuses input it cannot send (a currency it does not
// take) before the store is looked at: the step is spent by the next call
// that passes ChargeRequest.Validate, whatever the intent's state and the
// call's parameters, and nothing is remembered.
func (s *IntentScript) Invalid(field string) *IntentScript {
	return s.add("Invalid", step{kind: stepInvalid, field: field})
}

// Fail answers with err as it is, for conditions the other steps do not
// cover. If err holds an *idempay.ValidationError and no
// *idempay.ChargeError, it is spent as Invalid is. Otherwise the attempt
// stays open, as after Unknown, unless idempay.OutcomeOf(err) is
// OutcomeFailed: then the attempt has failed as after Unreachable, and any
// next call begins the next attempt (script refusals the provider keeps
// with Decline or Reject). It panics if err is nil.
func (s *IntentScript) Fail(err error) *IntentScript {
	if err == nil {
		panic(fmt.Sprintf("idempaytest: OnIntent(%q).Fail: nil error; script a success with Succeed", s.id))
	}
	return s.add("Fail", step{kind: stepFail, err: err})
}

// WaitFor holds the next call that sends until release is closed, as a
// slow provider would: a flight of the Client. The step it answers with is
// the next one scripted (or the default). Calls with the same parameters
// and Key join the flight and get its answer; other calls of the intent
// wait for it to end. A caller whose context ends first gets an
// *idempay.ChargeError matching idempay.ErrStoppedWaiting, outcome
// unknown, with the attempt's key and the requests on the wire (Requests),
// and the flight goes on: its outcome is recorded when release is closed,
// and the next call is answered from it. Close release, or the held call
// never returns.
func (s *IntentScript) WaitFor(release <-chan struct{}) *IntentScript {
	if release == nil {
		panic(fmt.Sprintf("idempaytest: OnIntent(%q).WaitFor: nil channel would hold the call forever", s.id))
	}
	return s.add("WaitFor", step{kind: stepWait, gate: release})
}

type stepKind int

const (
	stepSucceed stepKind = iota
	stepPending
	stepComplete
	stepFailPending
	stepDecline
	stepReject
	stepUnknown
	stepInProgress
	stepUnreachable
	stepInvalid
	stepFail
	stepWait
)

// step is one scripted answer.
type step struct {
	kind   stepKind
	charge *idempay.Charge // stepSucceed, stepPending: the fields to answer with
	code   string          // stepDecline, stepFailPending
	field  string          // stepInvalid, stepReject
	err    error           // stepFail
	gate   <-chan struct{} // stepWait
}

// beforeStore reports whether the step is a refusal the Client makes
// before looking at its store.
func (s step) beforeStore() bool {
	if s.kind == stepInvalid {
		return true
	}
	var ve *idempay.ValidationError
	return s.kind == stepFail && errors.As(s.err, &ve) && !errorsAsCharge(s.err)
}

func (s step) settles() bool { return s.kind == stepComplete || s.kind == stepFailPending }

// popBeforeStore spends the first step of the intent's script, past any
// WaitFor, if it is a refusal made before the store. f.mu is held.
func (f *FakeCharger) popBeforeStore(intentID string) (step, bool) {
	q := f.scripts[intentID]
	for i, s := range q {
		if s.kind == stepWait {
			continue
		}
		if !s.beforeStore() {
			break
		}
		if s.kind == stepInvalid {
			s.err = &idempay.ValidationError{Field: s.field, Reason: "refused (scripted)"}
		}
		f.scripts[intentID] = append(q[:i:i], q[i+1:]...)
		return s, true
	}
	return step{}, false
}

// popFlight spends the steps of a call that sends: the WaitFor steps at
// the head (merged into one gate) and the step that answers it, if one is
// scripted. On a pending charge only a step that settles it answers.
// f.mu is held.
func (f *FakeCharger) popFlight(intentID string, pending bool) (gate <-chan struct{}, s step, scripted bool) {
	q := f.scripts[intentID]
	var gates []<-chan struct{}
	for len(q) > 0 && q[0].kind == stepWait {
		gates = append(gates, q[0].gate)
		q = q[1:]
	}
	if len(q) > 0 && q[0].settles() == pending && !q[0].beforeStore() {
		s, scripted, q = q[0], true, q[1:]
	}
	if f.scripts != nil {
		f.scripts[intentID] = q
	}
	switch len(gates) {
	case 0:
		return nil, s, scripted
	case 1:
		return gates[0], s, scripted
	}
	all := make(chan struct{})
	go func() {
		for _, g := range gates {
			<-g
		}
		close(all)
	}()
	return all, s, scripted
}

// phase is where an intent stands for its script: what the next call that
// sends may be answered with.
type phase int

const (
	phaseOpen      phase = iota // no record, an open attempt or a failed one: any answer
	phasePending                // a pending charge: only a settling step
	phaseSucceeded              // succeeded: nothing is ever sent again
)

func phaseOf(st idempay.State) phase {
	switch st {
	case idempay.StatePending:
		return phasePending
	case idempay.StateSucceeded:
		return phaseSucceeded
	}
	return phaseOpen
}

// after is the phase once the step has answered a call in phase p.
func (s step) after(p phase, scripted bool) phase {
	switch {
	case !scripted && p == phasePending:
		return phasePending
	case !scripted:
		return phaseSucceeded
	}
	switch s.kind {
	case stepSucceed, stepComplete:
		return phaseSucceeded
	case stepPending:
		return phasePending
	case stepInvalid, stepWait:
		return p
	case stepFail:
		if s.beforeStore() {
			return p
		}
	}
	return phaseOpen
}

// scriptEnd is the phase the intent will be in once its flight, if one is
// held, and every queued step have answered. f.mu is held.
func (f *FakeCharger) scriptEnd(intentID string) phase {
	p := phaseOpen
	if fl := f.flights[intentID]; fl != nil {
		p = fl.after
	} else if r := f.intents[intentID]; r != nil {
		p = phaseOf(r.rec.State)
	}
	for _, s := range f.scripts[intentID] {
		p = s.after(p, true)
	}
	return p
}

// mayFollow says why the step could never be spent in phase p, if so.
func (s step) mayFollow(p phase) error {
	switch {
	case s.beforeStore():
		return nil
	case p == phaseSucceeded:
		return errors.New("the intent has succeeded by this point of its script, and a succeeded intent answers every later call from the store: no step after it but Invalid is ever spent")
	case p == phasePending && !s.settles() && s.kind != stepWait:
		return errors.New("a pending charge is never sent again: after Pending only CompletePending, FailPending, Invalid or WaitFor is spent")
	case p != phasePending && s.settles():
		return errors.New("no charge is pending at this point of the script: script Pending first")
	}
	return nil
}

// sends is how many requests a call answered by the step has on the wire
// while it runs (a lookup of a pending charge counts none, as in the
// Client).
func (s step) sends(scripted bool, st idempay.State) int {
	var ce *idempay.ChargeError
	switch {
	case st == idempay.StatePending:
		return 0
	case !scripted:
		return 1
	case s.kind == stepInProgress:
		return 0
	case s.kind == stepFail && errors.As(s.err, &ce):
		return ce.Requests
	case s.kind == stepFail:
		return 0
	}
	return 1
}

// answer is what a step returns for one call, and what it makes of the
// attempt: state is "" when the attempt stays as it was.
type answer struct {
	charge  *idempay.Charge
	err     error
	state   idempay.State
	refused bool // a failure the provider keeps for these parameters
}

// failure is a copy of the answer's *ChargeError, kept for the replay of a
// refusal: a copy, so that a caller changing the error it got cannot change
// later answers.
func (a answer) failure() *idempay.ChargeError {
	var ce *idempay.ChargeError
	if !errors.As(a.err, &ce) {
		return nil
	}
	c := *ce
	return &c
}

// fakeURL is where the fake's transport errors say they were sending.
const fakeURL = "https://charger.idempaytest.invalid" + ChargePath

// answer builds the step's result for req on the intent's current
// attempt, with errors shaped as the Client shapes them: a *ChargeError
// whose Err holds the sentinel and the *APIError or transport error behind
// it. fresh says the call began the attempt: a refusal that rests on
// "nothing reached the provider" is definite only then, since an earlier
// request with the key may have charged.
func (s step) answer(req idempay.ChargeRequest, r *fakeRecord, fresh bool) answer {
	key := r.rec.Key
	fail := func(o idempay.Outcome, attempts int, err error) answer {
		a := answer{err: &idempay.ChargeError{IntentID: req.IntentID, Key: key, Outcome: o, Requests: attempts, Err: err}}
		if o == idempay.OutcomeFailed {
			a.state = idempay.StateFailed
		}
		return a
	}
	switch s.kind {
	case stepDecline, stepFailPending:
		attempts := 1
		if s.kind == stepFailPending {
			attempts = 0 // found by a lookup: no charge request sent
		}
		a := fail(idempay.OutcomeFailed, attempts, declineError(s.code, s.kind == stepFailPending))
		a.refused = true
		return a
	case stepReject:
		refusal := &idempay.APIError{Provider: "fake", Status: 400, Type: "invalid_request_error",
			Code: "parameter_invalid", Param: s.field, Message: s.field + " is invalid (scripted)"}
		if !fresh {
			return fail(idempay.OutcomeUnknown, 1, refusal)
		}
		a := fail(idempay.OutcomeFailed, 1, fmt.Errorf("%w: %w", idempay.ErrInvalidRequest, refusal))
		a.refused = true
		return a
	case stepUnknown:
		return fail(idempay.OutcomeUnknown, 1, &url.Error{Op: "Post", URL: fakeURL, Err: io.EOF})
	case stepInProgress:
		return fail(idempay.OutcomeUnknown, 0,
			fmt.Errorf("%w: leased by another instance (scripted)", idempay.ErrInProgress))
	case stepUnreachable:
		refused := &url.Error{Op: "Post", URL: fakeURL, Err: syscall.ECONNREFUSED}
		if !fresh {
			return fail(idempay.OutcomeUnknown, 1, refused)
		}
		return fail(idempay.OutcomeFailed, 1, fmt.Errorf("%w: %w", idempay.ErrUnreachable, refused))
	case stepFail:
		a := answer{err: s.err}
		if idempay.OutcomeOf(s.err) == idempay.OutcomeFailed {
			a.state = idempay.StateFailed
		}
		return a
	case stepComplete:
		ch := copyCharge(r.charge)
		ch.State, ch.Status, ch.AuthorizeURL = idempay.StateSucceeded, string(idempay.StateSucceeded), ""
		ch.Replayed, ch.ReplayedFrom, ch.Requests = true, idempay.ReplayFromLookup, 0
		return answer{charge: ch, state: idempay.StateSucceeded}
	}
	ch := s.charged(req, r)
	a := answer{charge: ch, state: ch.State}
	a.charge, a.err = answerCharge(ch)
	return a
}

// declineError is the cause of a scripted decline; replayed marks one
// found by a lookup, which the Client reads as the provider's replay.
func declineError(code string, replayed bool) error {
	return fmt.Errorf("%w: %w", idempay.ErrDeclined, &idempay.APIError{
		Provider: "fake", Status: 402, Type: "card_error", Code: "card_declined",
		DeclineCode: code, Message: "the card was declined (scripted)", Replayed: replayed})
}

// charged fills the scripted charge's zero fields from the request and
// the attempt, for a success or a pending charge.
func (s step) charged(req idempay.ChargeRequest, r *fakeRecord) *idempay.Charge {
	var ch idempay.Charge
	if s.charge != nil {
		ch = *s.charge
	}
	ch.IntentID, ch.Key, ch.Attempt = req.IntentID, r.rec.Key, r.rec.Attempt
	ch.State = idempay.StateSucceeded
	if s.kind == stepPending {
		ch.State = idempay.StatePending
	}
	ch.ID = cmp.Or(ch.ID, FakeChargeID(req.IntentID))
	ch.Status = cmp.Or(ch.Status, string(ch.State))
	ch.Amount = cmp.Or(ch.Amount, req.Amount)
	ch.Currency = cmp.Or(ch.Currency, strings.ToUpper(req.Currency))
	ch.ParamsDiffer = false
	if !ch.Replayed || ch.ReplayedFrom == idempay.ReplayFromServer {
		ch.Requests = cmp.Or(ch.Requests, 1) // a store replay sends nothing
	}
	return &ch
}
