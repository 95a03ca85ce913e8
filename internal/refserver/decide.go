package refserver

import (
	"net/http"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// decideOp decides an operation the way a provider does, from where the
// intent's charge stands in the books (found false when there is none):
// the answer to store, and the operation to record with it (nil for a
// refusal). The books' decision lock is held. With Config.Lenient, every
// check but the charge's existence is skipped.
func (s *Server) decideOp(a opAttempt, b fakes.Balance, found bool) (faults.Stored, *Op) {
	c := b.Charge
	switch {
	case !found:
		return refusal(invalidParam("order_id", "no charge for this order")), nil
	case a.req.ChargeID != "" && a.req.ChargeID != c.ID:
		return refusal(invalidParam("charge_id", "charge_id is not the order's charge")), nil
	}
	amount := a.req.Amount
	if a.t == opCancel || (a.t == opCapture && amount == 0) {
		amount = c.Amount
	}
	if p := refusalOf(b.Problem(a.t.typ, amount)); p != nil && !s.cfg.Lenient {
		return refusal(p), nil
	}
	op := &Op{Type: a.t.typ, ID: c.ID, OpID: a.req.id(a.t), ChargeID: c.ID, Merchant: a.merchant,
		Intent: a.req.OrderID, Key: a.key, Amount: amount, Currency: "JPY", Status: fakes.OpSucceeded, Time: s.now()}
	status := http.StatusOK
	if a.t == opRefund {
		op.ID, status = newID("re_"), http.StatusCreated
	}
	return faults.Stored{Status: status, Body: mustJSON(opResultOf(a.t, *op))}, op
}

// refusalOf is the error a provider answers a problem with, or nil.
func refusalOf(p fakes.Problem) *apiError {
	unexpected := func(msg string) *apiError {
		return &apiError{Type: faults.TypeInvalid, Code: "payment_intent_unexpected_state", Message: msg}
	}
	switch p {
	case fakes.Cancelled:
		return unexpected("the authorisation was cancelled")
	case fakes.NotCaptured:
		return unexpected("the charge was not captured")
	case fakes.RefundExceeds:
		return invalidParam("amount", "amount is more than is left to refund")
	case fakes.NotAuthorization:
		return unexpected("the charge is not an authorisation")
	case fakes.AuthorizationClosed:
		return unexpected("the authorisation was captured or cancelled")
	case fakes.CaptureExceeds:
		return invalidParam("amount", "amount is more than was authorised")
	}
	return nil
}

// refusal is a business refusal, stored under the key as providers store
// what they answered once execution started.
func refusal(e *apiError) faults.Stored {
	return faults.Stored{Status: http.StatusBadRequest, Body: e.Body()}
}

// opResult is the body of an operation's answer and of its lookup.
func opResultOf(t opType, o Op) map[string]any {
	status := map[opType]string{opRefund: "succeeded", opCapture: "captured", opCancel: "canceled"}[t]
	return map[string]any{"id": o.ID, t.idField: o.OpID, "order_id": o.Intent, "charge_id": o.ChargeID,
		"status": status, "amount": o.Amount, "currency": o.Currency}
}
