package omise

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/idempay/idempay"
)

// refund is the part of Omise's refund object the adapter reads.
type refund struct {
	Object   string `json:"object"`
	ID       string `json:"id"`
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Charge is the refunded charge's ID, or the charge itself when
	// expanded: read as raw JSON, so that either shape parses.
	Charge   json.RawMessage            `json:"charge"`
	Voided   bool                       `json:"voided"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// parseRefund reads a refund object; ok is false for anything else.
func parseRefund(body []byte) (r refund, ok bool) {
	if json.Unmarshal(body, &r) != nil || r.ID == "" || r.Object != "refund" {
		return refund{}, false
	}
	return r, true
}

// verdict says what a refund object's status means for the money. The
// status is deprecated in Omise's current documentation and absent from
// older refund objects: a refund without one is a refund made.
func (r refund) verdict(v idempay.Verdict) idempay.Verdict {
	op := &idempay.Operation{ID: r.ID, Status: r.Status, Amount: r.Amount, Currency: strings.ToUpper(r.Currency)}
	switch r.Status {
	case "closed", "successful", "":
		v.Kind, op.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "pending":
		v.Kind, op.State = idempay.KindPending, idempay.StatePending
	case "failed":
		// The refund object itself failed: no money went back, and none
		// will under this refund.
		v.Kind = idempay.KindDeclined
		v.Err = &idempay.APIError{Code: r.Status, Message: "refund " + r.ID + " is " + r.Status}
		return v
	default:
		v.Kind = idempay.KindUnknown
		return v
	}
	v.Operation = op
	return v
}

// ReadOp interprets Omise's answer to an operation of type t: to a refund,
// the refund object (below); to a capture or a reverse, the charge,
// captured (paid) or reversed, or not.
func (p Provider) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	if t == idempay.OpRefund {
		return p.readRefund(resp, body)
	}
	return readChargeOp(t, resp, body)
}

// readRefund interprets Omise's answer to POST /charges/{id}/refunds; see
// OPERATIONS.md for the table. A refund object answers by its status; an
// error never proves more than that this request made no refund, so every
// refusal is KindInvalid (failed only when no earlier attempt may have
// refunded), never KindDeclined.
func (p Provider) readRefund(resp *http.Response, body []byte) idempay.Verdict {
	v := idempay.Verdict{Kind: idempay.ClassifyStatus(resp.StatusCode), RequestID: requestID(resp.Header)}
	switch v.Kind {
	case idempay.KindSucceeded:
		r, ok := parseRefund(body)
		if !ok {
			v.Kind = idempay.KindUnknown // Omise did something we cannot read
			return v
		}
		return r.verdict(v)
	case idempay.KindUnknown:
		return v
	}
	return readOpError(v, resp, body)
}

func readChargeOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	v := idempay.Verdict{Kind: idempay.ClassifyStatus(resp.StatusCode), RequestID: requestID(resp.Header)}
	switch v.Kind {
	case idempay.KindSucceeded:
		c, ok := parseCharge(body)
		if !ok {
			v.Kind = idempay.KindUnknown
			return v
		}
		return c.opVerdict(t, v, 0, false)
	case idempay.KindUnknown:
		return v
	}
	return readOpError(v, resp, body)
}

// opCodeKinds maps Omise's error codes on refunds, captures and reverses
// to verdicts; a code not listed is classified by its HTTP status. None is
// KindDeclined: Omise stores nothing under a key, so a refusal speaks for
// the request that got it only, and an earlier attempt whose answer was
// lost may have done what this one was refused (failed_capture is also
// what Omise answers a charge captured already).
var opCodeKinds = map[string]idempay.Kind{
	"authentication_failure": idempay.KindConfig,
	// The charge, which the store named, is not this key's: a key of
	// another account, or another environment's.
	"not_found":      idempay.KindConfig,
	"invalid_amount": idempay.KindInvalid, // beyond what can be refunded or captured
	"invalid_charge": idempay.KindInvalid,
	// Omise's API errors page: "refund beyond the limits set per country";
	// the fake answers it for a charge it cannot refund (15 refunds, 365
	// days, disputed). This request's refusal, as the others.
	"failed_refund":  idempay.KindInvalid,
	"failed_capture": idempay.KindInvalid, // not authorised, or captured already
	"expired_charge": idempay.KindInvalid, // an authorisation past its 7 days
	"failed_void":    idempay.KindInvalid,
	"bad_request":    idempay.KindInvalid,
	// Omise answers it 400, and asks to try again.
	"backend_error": idempay.KindServerError,
}

// readOpError reads an error answer to an operation.
func readOpError(v idempay.Verdict, resp *http.Response, body []byte) idempay.Verdict {
	e, isOmise := readError(body)
	v.Err = &idempay.APIError{Code: e.Code, Message: e.Message}
	if k, ok := opCodeKinds[e.Code]; ok && isOmise {
		v.Kind = k
	} else if resp.StatusCode == http.StatusUnprocessableEntity && !isOmise {
		// As for charges: the IETF draft's key re-used with other
		// parameters, unknown rather than failed.
		v.Kind = idempay.KindKeyConflict
	}
	return v
}

// paidOut reports whether the charge moved money: paid, or captured in
// API versions before paid.
func (c charge) paidOut() bool { return c.Paid || (c.Status == "" && c.Captured) }

// open reports whether the charge is an authorisation still waiting for
// its capture or reverse.
func (c charge) open() bool {
	return c.Status == "pending" && c.Authorized && !c.paidOut() && !c.Reversed && !c.Expired
}

// ended names why an authorisation that did not move money can no longer
// be captured or reversed, or is empty.
func (c charge) ended() string {
	switch {
	case c.Status == "reversed" || c.Reversed:
		return "reversed"
	case c.Status == "expired" || c.Expired:
		return "expired"
	case c.Status == "failed":
		return "failed"
	}
	return ""
}

// opVerdict says what a charge object means for a capture or a reverse of
// it. want is the capture's amount for a lookup (zero for an answer),
// which must be what was captured. lookup allows KindNotFound: a charge
// still authorised proves the operation was not done, and Omise itself
// refuses a second capture or reverse of one charge, so a resend after a
// lookup that raced the first request cannot do it twice (a multi-capture
// charge proves nothing: it can be captured again).
func (c charge) opVerdict(t idempay.OpType, v idempay.Verdict, want int64, lookup bool) idempay.Verdict {
	currency := strings.ToUpper(c.Currency)
	refuse := func(code, why string) idempay.Verdict {
		v.Kind = idempay.KindDeclined
		v.Err = &idempay.APIError{Code: code, Message: "charge " + c.ID + " " + why}
		return v
	}
	switch {
	case t == idempay.OpCapture && c.paidOut():
		amount := cmp.Or(c.CapturedAmount, c.Amount)
		if (c.Status != "successful" && c.Status != "") || (c.Capture != nil && *c.Capture) || (want > 0 && amount != want) {
			// Paid, but not as this capture would have left it: captured
			// when it was made, or for another amount.
			v.Kind = idempay.KindUnknown
			return v
		}
		v.Kind = idempay.KindSucceeded
		v.Operation = &idempay.Operation{ID: c.ID, Status: cmp.Or(c.Status, "successful"), State: idempay.StateSucceeded,
			Amount: amount, Currency: currency}
	case t == idempay.OpCancel && c.ended() == "reversed" && !c.paidOut():
		v.Kind = idempay.KindSucceeded
		v.Operation = &idempay.Operation{ID: c.ID, Status: "reversed", State: idempay.StateSucceeded,
			Amount: cmp.Or(c.AuthorizedAmount, c.Amount), Currency: currency}
	case t == idempay.OpCancel && c.paidOut():
		return refuse("captured", "was captured: it can no longer be reversed")
	case !c.paidOut() && c.ended() != "":
		return refuse(c.ended(), "is "+c.ended()+": it can no longer be captured or reversed")
	case lookup && c.open() && !c.MultiCapture:
		v.Kind = idempay.KindNotFound
	default:
		v.Kind = idempay.KindUnknown
	}
	return v
}
