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
// one intent, one step per call, in the order the methods are called:
//
//	fake.OnIntent("order-1").Unknown().Succeed()
//
// answers the first call with an unknown outcome and the second with a
// success; later calls replay that success. Each method returns the script
// for chaining. Get one from FakeCharger.OnIntent; a zero IntentScript
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

func (s *IntentScript) add(st step) *IntentScript {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.f.scripts == nil {
		s.f.scripts = map[string][]step{}
	}
	s.f.scripts[s.id] = append(s.f.scripts[s.id], st)
	return s
}

// Succeed answers with a fresh synthetic success (FakeChargeID, the
// intent's key, the request's amount and currency, Attempts 1), which
// settles the intent if it was not settled yet.
func (s *IntentScript) Succeed() *IntentScript { return s.add(step{kind: stepSucceed}) }

// SucceedWith answers with ch. Its zero fields are filled as Succeed
// fills them; set State to idempay.StatePending for a 3-D Secure charge,
// or Replayed and ReplayedFrom to idempay.ReplayFromServer for a success
// the provider replayed. It settles the intent if it was not settled yet.
func (s *IntentScript) SucceedWith(ch idempay.Charge) *IntentScript {
	return s.add(step{kind: stepSucceed, charge: &ch})
}

// Decline answers with a decline carrying declineCode (for example
// "insufficient_funds"): outcome failed, errors.Is idempay.ErrDeclined,
// and an *idempay.APIError (Provider "fake", status 402, code
// card_declined) for errors.As. It settles the intent if it was not settled yet, so later
// calls get the same decline, as from the Client's store.
func (s *IntentScript) Decline(declineCode string) *IntentScript {
	return s.add(step{kind: stepDecline, code: declineCode})
}

// Unknown answers with an unknown outcome: every attempt's answer was
// lost (errors.Is idempay.ErrOutcomeUnknown and io.EOF). Nothing is
// settled: the next call resumes, as the Client does with the same key.
func (s *IntentScript) Unknown() *IntentScript { return s.add(step{kind: stepUnknown}) }

// InProgress answers as a Client whose intent is leased by another
// instance sharing its store: outcome unknown, errors.Is
// idempay.ErrInProgress, nothing sent (Attempts 0). Nothing is settled.
// (A Client that got 409 on every attempt also says ErrInProgress, and
// carries the 409 as an *idempay.APIError; script that with Fail.)
func (s *IntentScript) InProgress() *IntentScript { return s.add(step{kind: stepInProgress}) }

// Unreachable answers as a Client that never reached the provider:
// outcome failed, errors.Is idempay.ErrUnreachable and
// syscall.ECONNREFUSED. Nothing is settled: the next call sends again.
func (s *IntentScript) Unreachable() *IntentScript { return s.add(step{kind: stepUnreachable}) }

// Invalid answers with an *idempay.ValidationError for field (errors.Is
// idempay.ErrInvalidRequest, outcome failed), as the Client refuses bad
// input before storing anything: the step is spent even by a request
// whose parameters differ from the intent's first, and nothing is
// remembered.
func (s *IntentScript) Invalid(field string) *IntentScript {
	return s.add(step{kind: stepInvalid, field: field})
}

// Fail answers with err as it is, for conditions the other steps do not
// cover. Nothing is settled. OutcomeOf(err) is unknown unless err is an
// *idempay.ChargeError or *idempay.ValidationError that says otherwise.
func (s *IntentScript) Fail(err error) *IntentScript { return s.add(step{kind: stepFail, err: err}) }

type stepKind int

const (
	stepSucceed stepKind = iota
	stepDecline
	stepUnknown
	stepInProgress
	stepUnreachable
	stepInvalid
	stepFail
)

// step is one scripted answer.
type step struct {
	kind   stepKind
	charge *idempay.Charge // stepSucceed: the fields to answer with
	code   string          // stepDecline
	field  string          // stepInvalid
	err    error           // stepFail
}

// answer is what a step returns for one request.
type answer struct {
	charge  *idempay.Charge
	err     error
	settles bool
}

// chargeErr is a copy of the answer's *ChargeError, kept for the replay of
// a settled decline: a copy, so that a caller changing the error it got
// cannot change later answers.
func (a answer) chargeErr() *idempay.ChargeError {
	var ce *idempay.ChargeError
	if !errors.As(a.err, &ce) {
		return nil
	}
	c := *ce
	return &c
}

// fakeURL is where the fake's transport errors say they were sending.
const fakeURL = "https://charger.idempaytest.invalid" + ChargePath

// answer builds the step's result for req under key, with errors shaped
// as the Client shapes them: a *ChargeError whose Err holds the sentinel
// and the *APIError or transport error behind it.
func (s step) answer(req idempay.ChargeRequest, key string) answer {
	fail := func(o idempay.Outcome, attempts int, err error) answer {
		return answer{err: &idempay.ChargeError{IntentID: req.IntentID, Key: key, Outcome: o,
			Attempts: attempts, Err: err}}
	}
	switch s.kind {
	case stepDecline:
		a := fail(idempay.OutcomeFailed, 1, fmt.Errorf("%w: %w", idempay.ErrDeclined, &idempay.APIError{
			Provider: "fake", Status: 402, Type: "card_error", Code: "card_declined",
			DeclineCode: s.code, Message: "the card was declined (scripted)"}))
		a.settles = true
		return a
	case stepUnknown:
		return fail(idempay.OutcomeUnknown, 1, &url.Error{Op: "Post", URL: fakeURL, Err: io.EOF})
	case stepInProgress:
		return fail(idempay.OutcomeUnknown, 0,
			fmt.Errorf("%w: leased by another instance (scripted)", idempay.ErrInProgress))
	case stepUnreachable:
		return fail(idempay.OutcomeFailed, 1, fmt.Errorf("%w: %w", idempay.ErrUnreachable,
			&url.Error{Op: "Post", URL: fakeURL, Err: syscall.ECONNREFUSED}))
	case stepInvalid:
		return answer{err: &idempay.ValidationError{Field: s.field, Reason: "refused (scripted)"}}
	case stepFail:
		return answer{err: s.err}
	}
	return answer{charge: s.success(req, key), settles: true}
}

// success fills the scripted charge's zero fields from the request.
func (s step) success(req idempay.ChargeRequest, key string) *idempay.Charge {
	var ch idempay.Charge
	if s.charge != nil {
		ch = *s.charge
	}
	ch.IntentID = cmp.Or(ch.IntentID, req.IntentID)
	ch.Key = cmp.Or(ch.Key, key)
	ch.ID = cmp.Or(ch.ID, FakeChargeID(req.IntentID))
	ch.State = cmp.Or(ch.State, idempay.StateSucceeded)
	ch.Status = cmp.Or(ch.Status, string(ch.State))
	ch.Amount = cmp.Or(ch.Amount, req.Amount)
	ch.Currency = cmp.Or(ch.Currency, strings.ToUpper(req.Currency))
	if !ch.Replayed || ch.ReplayedFrom == idempay.ReplayFromServer {
		ch.Attempts = cmp.Or(ch.Attempts, 1) // a store replay sends nothing
	}
	return &ch
}
