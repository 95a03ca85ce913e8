package idempaytest

import (
	"fmt"

	"github.com/idempay/idempay"
)

// IntentScript queues how the FakeCharger's provider answers the next
// calls for one intent that send, one step per call, in the order the
// methods are called:
//
//	fake.OnIntent("order-1").Unknown().Succeed()
//
// loses the answer to the first call (outcome unknown) and answers the
// second, which resumes the attempt with its key, with a success; later
// calls are answered from the store. What the caller gets is what an
// idempay.Client makes of that answer. A pending charge is asked about,
// not sent again: only CompletePending or FailPending answers it, and the
// other steps wait behind them.
//
// Each method returns the script for chaining. Get a script from
// FakeCharger.OnIntent.
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

// Succeed answers with a success: charge ID FakeChargeID, the request's
// amount and currency.
func (s *IntentScript) Succeed() *IntentScript { return s.add(step{kind: stepSucceed}) }

// SucceedWith answers with a success carrying ch's ID, Status, Amount and
// Currency, each defaulted as Succeed does; with Replayed set and
// ReplayedFrom idempay.ReplayFromServer, the answer is marked as the
// provider's replay. A ch whose State is idempay.StatePending is answered
// as PendingWith; any State but that, StateSucceeded or none panics.
func (s *IntentScript) SucceedWith(ch idempay.Charge) *IntentScript {
	switch ch.State {
	case "", idempay.StateSucceeded:
		return s.add(step{kind: stepSucceed, charge: &ch})
	case idempay.StatePending:
		return s.PendingWith(ch)
	}
	panic(fmt.Sprintf("idempaytest: OnIntent(%q).SucceedWith: a charge in state %q is not a success", s.id, ch.State))
}

// Pending answers with a pending charge, as for 3-D Secure or a hosted
// payment page: the caller gets the charge and an error matching
// idempay.ErrPending. Later calls with its parameters ask about it and
// are told it is pending until CompletePending or FailPending settles it.
func (s *IntentScript) Pending() *IntentScript { return s.add(step{kind: stepPending}) }

// PendingWith answers as Pending, with ch's ID, Status, Amount, Currency
// and AuthorizeURL (where the customer must go).
func (s *IntentScript) PendingWith(ch idempay.Charge) *IntentScript {
	return s.add(step{kind: stepPending, charge: &ch})
}

// CompletePending answers the next lookup of the pending charge: it
// succeeded.
func (s *IntentScript) CompletePending() *IntentScript { return s.add(step{kind: stepComplete}) }

// FailPending answers the next lookup of the pending charge: it was
// declined with declineCode (the customer abandoned 3-D Secure).
func (s *IntentScript) FailPending(declineCode string) *IntentScript {
	return s.add(step{kind: stepFailPending, code: declineCode})
}

// Decline answers 402 with a decline carrying declineCode (for example
// "insufficient_funds"): outcome failed, errors.Is idempay.ErrDeclined.
func (s *IntentScript) Decline(declineCode string) *IntentScript {
	return s.add(step{kind: stepDecline, code: declineCode})
}

// Reject answers 400 invalid_request_error naming param: outcome failed
// on a fresh attempt, unknown on one the call resumed.
func (s *IntentScript) Reject(param string) *IntentScript {
	return s.add(step{kind: stepReject, field: param})
}

// Unknown loses the answer: the request arrived and the connection closed
// before any byte came back. The outcome is unknown and the attempt stays
// open for a call with the same parameters to resume.
func (s *IntentScript) Unknown() *IntentScript { return s.add(step{kind: stepUnknown}) }

// InProgress answers 409: another request with the key is still running
// at the provider. The outcome is unknown (idempay.ErrInProgress).
func (s *IntentScript) InProgress() *IntentScript { return s.add(step{kind: stepInProgress}) }

// Unreachable refuses the connection: nothing arrived. On a fresh attempt
// the outcome is failed (idempay.ErrUnreachable); on one the call resumed
// it is unknown, since an earlier request with its key may have charged.
func (s *IntentScript) Unreachable() *IntentScript { return s.add(step{kind: stepUnreachable}) }

// Fault answers the next request as a provider server struck by f does
// (see Fault's values): Pre and Mid lose the answer with nothing charged;
// Post charges and loses the answer, and the provider answers any later
// request under that key with the stored charge, marked replayed;
// Unavailable answers 503 and Internal 500, nothing charged. The caller
// gets outcome unknown from each: none tells the client that nothing
// moved. None lets the request through as if unscripted.
func (s *IntentScript) Fault(f Fault) *IntentScript { return s.add(step{kind: stepFault, fault: f}) }

// Invalid makes the adapter refuse the next call's input, naming field,
// before the store is looked at: a bare *idempay.ValidationError, and
// nothing is remembered or sent.
func (s *IntentScript) Invalid(field string) *IntentScript {
	return s.add(step{kind: stepInvalid, field: field})
}

// WaitFor holds the next request for the intent until release is closed,
// as a slow provider would; it is answered by the step after it. Identical
// calls join the Client's flight meanwhile, and a caller whose context ends
// first gets idempay.ErrStoppedWaiting while the flight goes on. Close
// release, or the request is held until the test's process ends.
func (s *IntentScript) WaitFor(release <-chan struct{}) *IntentScript {
	if release == nil {
		panic(fmt.Sprintf("idempaytest: OnIntent(%q).WaitFor: nil channel would hold the call forever", s.id))
	}
	return s.add(step{kind: stepWait, gate: release})
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
	stepFault
	stepWait
)

// step is one scripted answer.
type step struct {
	kind   stepKind
	charge *idempay.Charge // stepSucceed, stepPending: the fields to answer with
	code   string          // stepDecline, stepFailPending
	field  string          // stepInvalid, stepReject
	gate   <-chan struct{} // stepWait
	fault  Fault           // stepFault
}

func (s step) settles() bool { return s.kind == stepComplete || s.kind == stepFailPending }

// popInvalid spends the intent's first step past any WaitFor if it is
// Invalid.
func (f *FakeCharger) popInvalid(intentID string) (field string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.scripts[intentID]
	for i, s := range q {
		switch s.kind {
		case stepWait:
			continue
		case stepInvalid:
			f.scripts[intentID] = append(q[:i:i], q[i+1:]...)
			return s.field, true
		}
		break
	}
	return "", false
}

// popSend notes the request and spends its steps: the WaitFor steps at
// the head (merged into one gate) and the step that answers it, if one is
// scripted for its kind (a lookup is answered only by a step that settles).
func (f *FakeCharger) popSend(intentID string, r Sent) (gate <-chan struct{}, s step, scripted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sent == nil {
		f.sent = map[string][]Sent{}
	}
	f.sent[intentID] = append(f.sent[intentID], r)
	lookup := r.Lookup
	q := f.scripts[intentID]
	var gates []<-chan struct{}
	for len(q) > 0 && q[0].kind == stepWait {
		gates = append(gates, q[0].gate)
		q = q[1:]
	}
	if len(q) > 0 && q[0].settles() == lookup && q[0].kind != stepInvalid {
		s, scripted, q = q[0], true, q[1:]
	}
	if f.scripts != nil {
		f.scripts[intentID] = q
	}
	return mergeGates(gates), s, scripted
}

// mergeGates is a channel closed once every gate is.
func mergeGates(gates []<-chan struct{}) <-chan struct{} {
	switch len(gates) {
	case 0:
		return nil
	case 1:
		return gates[0]
	}
	all := make(chan struct{})
	go func() {
		for _, g := range gates {
			<-g
		}
		close(all)
	}()
	return all
}
