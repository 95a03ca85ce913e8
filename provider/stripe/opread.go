package stripe

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/idempay/idempay"
)

// refund is the part of Stripe's Refund object the adapter reads.
type refund struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Status        string            `json:"status"`
	Amount        int64             `json:"amount"`
	Currency      string            `json:"currency"`
	PaymentIntent json.RawMessage   `json:"payment_intent"` // an ID, null, or expanded
	Metadata      map[string]string `json:"metadata"`
	FailureReason string            `json:"failure_reason"`
}

// parseRefund reads a Refund body; ok is false when the body is not one.
func parseRefund(body []byte) (re refund, ok bool) {
	if json.Unmarshal(body, &re) != nil || re.ID == "" || re.Object != "refund" {
		return refund{}, false
	}
	return re, true
}

// paymentIntentID is the refund's PaymentIntent, if it names one by ID.
func (re refund) paymentIntentID() string {
	var id string
	if json.Unmarshal(re.PaymentIntent, &id) != nil {
		return ""
	}
	return id
}

// verdict says what a refund's status means for the money: succeeded is
// paid back; pending and requires_action (the customer must give
// something, such as bank details) may still be; failed and canceled moved
// none, for good (a failed refund's money comes back to the balance).
// Any other word settles nothing.
func (re refund) verdict(v idempay.Verdict) idempay.Verdict {
	op := &idempay.Operation{ID: re.ID, Status: re.Status, Amount: fromStripe(re.Currency, re.Amount),
		Currency: strings.ToUpper(re.Currency)}
	switch re.Status {
	case "succeeded":
		v.Kind, op.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "pending", "requires_action":
		v.Kind, op.State = idempay.KindPending, idempay.StatePending
	case "failed", "canceled":
		msg := "refund " + re.ID + " is " + re.Status
		if re.FailureReason != "" {
			msg += " (" + re.FailureReason + ")"
		}
		v.Kind, v.Err = idempay.KindDeclined, &idempay.APIError{Code: "refund_" + re.Status, Message: msg}
		return v
	default:
		v.Kind = idempay.KindUnknown
		return v
	}
	v.Operation = op
	return v
}

// captureVerdict says what the PaymentIntent a capture answered means:
// succeeded is captured (amount_received is what moved, the rest of the
// hold released); processing is pending (some payment methods capture
// asynchronously). Any other status is not what a capture leaves: unknown.
func (pi paymentIntent) captureVerdict(v idempay.Verdict) idempay.Verdict {
	op := &idempay.Operation{ID: pi.ID, Status: pi.Status, Amount: fromStripe(pi.Currency, pi.AmountReceived),
		Currency: strings.ToUpper(pi.Currency)}
	switch pi.Status {
	case "succeeded":
		v.Kind, op.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "processing":
		v.Kind, op.State = idempay.KindPending, idempay.StatePending
	default:
		v.Kind = idempay.KindUnknown
		return v
	}
	v.Operation = op
	return v
}

// cancelVerdict: a canceled PaymentIntent is a voided authorisation; any
// other status is not what a cancel leaves: unknown.
func (pi paymentIntent) cancelVerdict(v idempay.Verdict) idempay.Verdict {
	if pi.Status != "canceled" {
		v.Kind = idempay.KindUnknown
		return v
	}
	v.Kind = idempay.KindSucceeded
	v.Operation = &idempay.Operation{ID: pi.ID, Status: pi.Status, State: idempay.StateSucceeded,
		Amount: fromStripe(pi.Currency, pi.Amount), Currency: strings.ToUpper(pi.Currency)}
	return v
}

// ReadOp interprets Stripe's answer to an operation of type t (below, for
// each type).
func (p Provider) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	switch t {
	case idempay.OpCapture:
		return p.readCapture(resp, body)
	case idempay.OpCancel:
		return p.readCancel(resp, body)
	}
	return p.readRefund(resp, body)
}

// readRefund interprets Stripe's answer to POST /v1/refunds; see
// OPERATIONS.md for the table. A 2xx whose body is not a Refund is
// KindUnknown.
func (p Provider) readRefund(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(resp, body, func(v idempay.Verdict) idempay.Verdict {
		re, ok := parseRefund(body)
		if !ok {
			v.Kind = idempay.KindUnknown
			return v
		}
		return re.verdict(v)
	})
}

// readCapture interprets Stripe's answer to POST
// /v1/payment_intents/{id}/capture: the PaymentIntent.
func (p Provider) readCapture(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(resp, body, func(v idempay.Verdict) idempay.Verdict {
		pi, ok := parseIntent(body)
		if !ok {
			v.Kind = idempay.KindUnknown
			return v
		}
		return pi.captureVerdict(v)
	})
}

// readCancel interprets Stripe's answer to POST
// /v1/payment_intents/{id}/cancel: the PaymentIntent.
func (p Provider) readCancel(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(resp, body, func(v idempay.Verdict) idempay.Verdict {
		pi, ok := parseIntent(body)
		if !ok {
			v.Kind = idempay.KindUnknown
			return v
		}
		return pi.cancelVerdict(v)
	})
}

// readOp reads an operation's answer: a 2xx by success, an error body by
// opErrorKind.
func readOp(resp *http.Response, body []byte, success func(idempay.Verdict) idempay.Verdict) idempay.Verdict {
	v := headerVerdict(resp)
	switch v.Kind {
	case idempay.KindSucceeded:
		return success(v)
	case idempay.KindUnknown: // 1xx, 3xx
		return v
	}
	e := readError(body)
	v.Err = e.apiError()
	v.Kind = opErrorKind(resp.StatusCode, v.Kind, e, v.Replayed)
	return v
}

// opErrorKind refines the status's kind of an error answering an
// operation:
//
//   - idempotency errors as for charges: in flight (409) is retried; the
//     key used with other parameters is unknown;
//   - resource_missing (the PaymentIntent or refund is not this account's:
//     a secret key of another account, another mode) is a configuration
//     error;
//   - a 400 marked Idempotent-Replayed is the refusal Stripe stored for the
//     key when the request first executed (charge_already_refunded,
//     amount_too_large, charge_not_refundable,
//     payment_intent_unexpected_state, ...): it speaks for every request
//     made under the key, so it is a definite refusal, KindDeclined;
//   - a fresh 400 stays KindInvalid: the Client calls it failed only when
//     no earlier attempt under the key may have reached Stripe, else
//     unknown, and the next call's replay settles it.
func opErrorKind(status int, k idempay.Kind, e *stripeError, replayed bool) idempay.Kind {
	k = errorKind(status, k, e)
	switch {
	case k == idempay.KindKeyConflict || k == idempay.KindInFlight:
		return k
	case e.Code == "resource_missing" && status >= 400 && status < 500:
		return idempay.KindConfig
	case status == http.StatusBadRequest && replayed:
		return idempay.KindDeclined
	}
	return k
}
