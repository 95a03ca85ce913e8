package idempay

import (
	"context"
	"net/http"
)

// OpRequest is a refund, capture or cancel as an adapter builds it: the
// caller's request, completed by the Client from the intent's records.
type OpRequest struct {
	// Type is the operation: refund, capture or cancel.
	Type OpType
	// ID is the caller's operation ID (RefundRequest.RefundID, ...).
	// Adapters tag the provider's object with it where they can (metadata
	// "idempay_op"), so that a lookup finds the operation by it.
	ID string
	// IntentID is the charged intent the operation acts on.
	IntentID string
	// ChargeRef is the provider's ID of the intent's charge (Charge.ID: a
	// PaymentIntent, an Omise charge, a 2C2P invoice). It is empty when
	// ValidateOp is called, before the store is read.
	ChargeRef string
	// ChargeAttempt is the intent's attempt that succeeded (1, or more
	// after declined ones), for adapters whose provider keys a payment by
	// the attempt (2C2P's invoiceNo). Zero when ValidateOp is
	// called, and for charges recorded before attempts existed (take 1).
	ChargeAttempt int
	// Amount in minor units: what is refunded or captured. A capture of
	// the whole authorisation carries the authorised amount once the
	// Client has read it (zero in ValidateOp); a cancel carries the
	// authorised amount.
	Amount   int64
	Currency string            // upper-case ISO 4217: the charge's
	Reason   string            // RefundRequest.Reason or CancelRequest.Reason
	Metadata map[string]string // the caller's, to attach to the provider's object
}

// Operator is implemented by providers that can refund, capture or cancel
// a charge (Client.Refund, Capture and Cancel): one capability for the
// three, whose methods are told the operation's type. They mirror
// Provider's and Finder's for charges. An adapter returns what the wire
// said (a Verdict, a *ValidationError); the Client builds the caller's
// result and *OpError from it.
type Operator interface {
	// Operates reports whether the provider makes operations of type t,
	// and whether FindOp can look them up. The Client refuses a type it
	// does not make with ErrNotSupported (outcome failed) before anything
	// is stored, and settles one it cannot find by resending only. A
	// LookupBeforeResender provider needs finds for each type it makes: without
	// it, an operation that may have reached the provider is never
	// resent, and stays unknown.
	Operates(t OpType) (makes, finds bool)

	// ValidateOp refuses what the provider cannot accept, before anything
	// is stored: with a *ValidationError for the request, or with an error
	// matching ErrNotSupported when the provider is not set up for
	// op.Type. The ChargeRef and ChargeAttempt of op are not known yet.
	ValidateOp(op OpRequest) error

	// NewOpRequest builds one attempt of op carrying key, sent as built
	// on every retry.
	NewOpRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error)

	// ReadOp interprets an answer to an operation of type t. A succeeded
	// or pending Verdict carries the provider's object in
	// Verdict.Operation (ID, Status, State, Amount, Currency): for a
	// refund the refund, for a capture or cancel the charge. An operation
	// the provider refused for good (a failed or cancelled refund object)
	// is KindDeclined; an answer that does not say is KindUnknown, never
	// KindDeclined.
	ReadOp(t OpType, resp *http.Response, body []byte) Verdict

	// FindOp looks op up without making it, where Operates says it
	// finds: to settle an operation whose key may no longer be resent, a
	// pending one, or before every resend for a LookupBeforeResender provider. rec
	// is the operation's record (its Key, ProviderRef once known). It
	// answers as FindCharge does: found (succeeded, pending, declined),
	// KindNotFound only with proof that no such operation was made for
	// op.ID, KindUnknown or an error when it cannot tell.
	FindOp(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error)
}
