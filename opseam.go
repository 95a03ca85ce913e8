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
	// the Validate methods are called, before the store is read.
	ChargeRef string
	// ChargeAttempt is the intent's attempt that succeeded (1, or more
	// after declined ones), for adapters whose provider keys a payment by
	// the attempt (2C2P's invoiceNo). Zero when the Validate methods are
	// called, and for charges recorded before attempts existed (take 1).
	ChargeAttempt int
	// Amount in minor units: what is refunded or captured. A capture of
	// the whole authorisation carries the authorised amount once the
	// Client has read it (zero in ValidateCapture); a cancel carries the
	// authorised amount.
	Amount   int64
	Currency string            // upper-case ISO 4217: the charge's
	Reason   string            // RefundRequest.Reason or CancelRequest.Reason
	Metadata map[string]string // the caller's, to attach to the provider's object
}

// Refunder is implemented by providers that can refund a charge. Its
// methods mirror Provider's for charges: ValidateRefund refuses, with a
// *ValidationError, what the provider cannot accept (before anything is
// stored); NewRefundRequest builds one attempt carrying key, sent as built
// on every retry; ReadRefund interprets an answer. A succeeded or pending
// Verdict carries the provider's refund in Verdict.Operation (ID, Status,
// State, Amount, Currency); a refund the provider refused for good (a
// failed or cancelled refund object) is KindDeclined; an answer that does
// not say is KindUnknown, never KindDeclined.
type Refunder interface {
	ValidateRefund(op OpRequest) error
	NewRefundRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error)
	ReadRefund(resp *http.Response, body []byte) Verdict
}

// RefundFinder is implemented by Refunders that can look a refund up
// (Stripe lists a PaymentIntent's refunds, Omise a charge's): the Client
// uses it where Finder serves charges, to settle a refund whose key it may
// no longer resend, a pending refund, or before every resend for a
// LookupGuard provider. rec is the refund's record (its Key, ProviderRef
// once known). It answers as FindCharge does: found (succeeded, pending,
// declined), KindNotFound only with proof that no refund was made for
// op.ID, KindUnknown or an error when it cannot tell. A LookupGuard
// provider needs the finder of each operation it implements: without one,
// an operation that may have reached it is never resent, and stays unknown.
type RefundFinder interface {
	FindRefund(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error)
}

// Capturer is implemented by providers that can capture an authorisation
// (a charge made with manual capture), in part or in full. Its methods
// read as Refunder's; a succeeded Verdict.Operation is the captured charge.
type Capturer interface {
	ValidateCapture(op OpRequest) error
	NewCaptureRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error)
	ReadCapture(resp *http.Response, body []byte) Verdict
}

// CaptureFinder is implemented by Capturers that can tell whether a
// capture was made (the charge's status), as RefundFinder does for refunds.
type CaptureFinder interface {
	FindCapture(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error)
}

// Canceller is implemented by providers that can void an authorisation
// that was not captured (Stripe's cancel, Omise's reverse). Its methods
// read as Refunder's; a succeeded Verdict.Operation is the voided charge.
type Canceller interface {
	ValidateCancel(op OpRequest) error
	NewCancelRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error)
	ReadCancel(resp *http.Response, body []byte) Verdict
}

// CancelFinder is implemented by Cancellers that can tell whether a cancel
// was made, as RefundFinder does for refunds.
type CancelFinder interface {
	FindCancel(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error)
}

// capability is what a provider offers for one type of operation: the
// methods of its Refunder, Capturer or Canceller, and of the matching
// finder when it has one (find is nil otherwise).
type capability struct {
	validate func(OpRequest) error
	build    func(context.Context, Target, OpRequest, string) (*http.Request, error)
	read     func(*http.Response, []byte) Verdict
	find     func(context.Context, *http.Client, Target, OpRequest, Record) (Verdict, error)
}

// capabilityOf finds p's capability for t by type assertion: the one place
// where the optional interfaces of operations are looked for.
func capabilityOf(p Provider, t OpType) (capability, bool) {
	var c capability
	switch t {
	case OpRefund:
		r, ok := p.(Refunder)
		if !ok {
			return c, false
		}
		c = capability{r.ValidateRefund, r.NewRefundRequest, r.ReadRefund, nil}
		if f, ok := p.(RefundFinder); ok {
			c.find = f.FindRefund
		}
	case OpCapture:
		r, ok := p.(Capturer)
		if !ok {
			return c, false
		}
		c = capability{r.ValidateCapture, r.NewCaptureRequest, r.ReadCapture, nil}
		if f, ok := p.(CaptureFinder); ok {
			c.find = f.FindCapture
		}
	case OpCancel:
		r, ok := p.(Canceller)
		if !ok {
			return c, false
		}
		c = capability{r.ValidateCancel, r.NewCancelRequest, r.ReadCancel, nil}
		if f, ok := p.(CancelFinder); ok {
			c.find = f.FindCancel
		}
	default:
		return c, false
	}
	return c, true
}
