package refserver

import (
	"net/http"

	"github.com/idempay/idempay/internal/faults"
)

// decideOp decides an operation the way a provider does, from the
// intent's charge and the operations made of it: the answer to store, and
// the operation to record with it (nil for a refusal). s.ops.mu is held.
// With Config.Lenient, every check but the charge's existence is skipped.
func (s *Server) decideOp(a opAttempt) (faults.Stored, *Op) {
	c, ok := s.ops.charge(a.merchant, a.req.OrderID)
	switch {
	case !ok:
		return refusal(invalidParam("order_id", "no charge for this order")), nil
	case a.req.ChargeID != "" && a.req.ChargeID != c.id:
		return refusal(invalidParam("charge_id", "charge_id is not the order's charge")), nil
	}
	amount := a.req.Amount
	if a.t == opCancel || (a.t == opCapture && amount == 0) {
		amount = c.amount
	}
	if p := s.problem(a, c, amount); p != nil && !s.cfg.Lenient {
		return refusal(p), nil
	}
	op := &Op{Type: a.t.name, ID: c.id, OpID: a.req.id(a.t), ChargeID: c.id, Merchant: a.merchant,
		Intent: a.req.OrderID, Key: a.key, Amount: amount, Currency: "JPY", Time: s.now()}
	status := http.StatusOK
	if a.t == opRefund {
		op.ID, status = newID("re_"), http.StatusCreated
	}
	return faults.Stored{Status: status, Body: mustJSON(opResultOf(a.t, *op))}, op
}

// problem is what a provider would refuse in the operation, or nil.
func (s *Server) problem(a opAttempt, c chargeState, amount int64) *apiError {
	refunded, captured, captures, cancels := s.ops.state(a.merchant, a.req.OrderID)
	if !c.authorized {
		captured = c.amount
	}
	unexpected := func(msg string) *apiError {
		return &apiError{Type: typeInvalid, Code: "payment_intent_unexpected_state", Message: msg}
	}
	switch {
	case a.t == opRefund && c.authorized && cancels > 0:
		return unexpected("the authorisation was cancelled")
	case a.t == opRefund && c.authorized && captures == 0:
		return unexpected("the charge was not captured")
	case a.t == opRefund && refunded+amount > captured:
		return invalidParam("amount", "amount is more than is left to refund")
	case a.t != opRefund && !c.authorized:
		return unexpected("the charge is not an authorisation")
	case a.t != opRefund && (captures > 0 || cancels > 0):
		return unexpected("the authorisation was captured or cancelled")
	case a.t == opCapture && amount > c.amount:
		return invalidParam("amount", "amount is more than was authorised")
	}
	return nil
}

// refusal is a business refusal, stored under the key as providers store
// what they answered once execution started.
func refusal(e *apiError) faults.Stored {
	return faults.Stored{Status: http.StatusBadRequest, Body: e.body()}
}

// opResult is the body of an operation's answer and of its lookup.
func opResultOf(t opType, o Op) map[string]any {
	status := map[opType]string{opRefund: "succeeded", opCapture: "captured", opCancel: "canceled"}[t]
	return map[string]any{"id": o.ID, t.idField: o.OpID, "order_id": o.Intent, "charge_id": o.ChargeID,
		"status": status, "amount": o.Amount, "currency": o.Currency}
}
