package idempay

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Operation is the result of a refund, capture or cancel that succeeded or
// is pending at the provider. Adapters return it in Verdict.Operation with
// ID, Status, State, Amount and Currency; the Client fills the rest.
type Operation struct {
	Type      OpType `json:"type"`       // refund, capture or cancel
	OpID      string `json:"op_id"`      // the caller's operation ID (RefundID, ...)
	IntentID  string `json:"intent_id"`  // the intent acted on
	Key       string `json:"key"`        // the idempotency key sent
	ID        string `json:"id"`         // the provider's ID: the refund's; for a capture or cancel, what the provider answered (the charge's)
	Status    string `json:"status"`     // the provider's own status word
	State     State  `json:"state"`      // StateSucceeded or StatePending
	Amount    int64  `json:"amount"`     // minor units
	Currency  string `json:"currency"`   // upper-case ISO 4217
	RequestID string `json:"request_id"` // the provider's request ID, if sent

	// Replayed, ReplayedFrom, Attempts, Attempt and ParamsDiffer mean what
	// they mean on a Charge.
	Replayed     bool         `json:"replayed"`
	ReplayedFrom ReplaySource `json:"replayed_from,omitempty"`
	Attempts     int          `json:"attempts"`
	Attempt      int          `json:"attempt"`
	ParamsDiffer bool         `json:"params_differ,omitempty"`

	// Raw is the provider's response body, without secrets.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// receiptOf is the engine's receipt for an adapter's operation.
func receiptOf(o *Operation) *Charge {
	return &Charge{ID: o.ID, Status: o.Status, State: o.State, Amount: o.Amount, Currency: o.Currency,
		RequestID: o.RequestID, Raw: o.Raw}
}

// operationOf is the caller's Operation for the engine's receipt of an
// operation of type t on intentID; the receipt's IntentID is the record's
// ID, the operation's own.
func operationOf(t OpType, intentID string, ch *Charge) *Operation {
	return &Operation{Type: t, OpID: ch.IntentID, IntentID: intentID, Key: ch.Key, ID: ch.ID,
		Status: ch.Status, State: ch.State, Amount: ch.Amount, Currency: ch.Currency, RequestID: ch.RequestID,
		Replayed: ch.Replayed, ReplayedFrom: ch.ReplayedFrom, Attempts: ch.Attempts, Attempt: ch.Attempt,
		ParamsDiffer: ch.ParamsDiffer, Raw: ch.Raw}
}

// OpError is the error of Client.Refund, Capture and Cancel for every
// outcome but success, except bad input refused before anything was looked
// up (a bare *ValidationError, outcome failed). It reads as ChargeError
// does; OutcomeOf gives its Outcome.
type OpError struct {
	Type     OpType  // refund, capture or cancel
	OpID     string  // the caller's operation ID
	IntentID string  // the intent acted on
	Key      string  // the operation's key, once reserved
	Outcome  Outcome // what is known about the money
	Attempts int     // requests that left this process for this call
	Err      error   // the cause: a sentinel, an *AmountError, an *APIError, a transport error
}

// Error names the operation, its intent, the outcome, the attempts and
// the cause.
func (e *OpError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "idempay: %s %q of intent %q: outcome %s", e.Type, e.OpID, e.IntentID, e.Outcome)
	if e.Attempts > 0 {
		fmt.Fprintf(&b, " after %d attempt(s)", e.Attempts)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause and, as ChargeError does, ErrOutcomeUnknown or
// ErrPending for those outcomes.
func (e *OpError) Unwrap() []error {
	return (&ChargeError{Outcome: e.Outcome, Err: e.Err}).Unwrap()
}

// opAnswer turns the engine's answer for an operation into the caller's.
func opAnswer(t OpType, intentID string, ch *Charge, err error) (*Operation, error) {
	var op *Operation
	if ch != nil {
		op = operationOf(t, intentID, ch)
	}
	return op, opError(t, intentID, err)
}

// opError turns the engine's *ChargeError for an operation into an
// *OpError; any other error is returned as it is.
func opError(t OpType, intentID string, err error) error {
	ce, ok := err.(*ChargeError)
	if !ok {
		return err
	}
	return &OpError{Type: t, OpID: ce.IntentID, IntentID: intentID, Key: ce.Key, Outcome: ce.Outcome,
		Attempts: ce.Attempts, Err: ce.Err}
}
