package stripetest

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// opCall is a refund, capture or cancel being decided.
type opCall struct {
	typ          fakes.OpType
	account, key string
	opID         string // metadata[idempay_op]
	p            opParams
	pi           *PaymentIntent // as it stands now
	b            fakes.Balance  // its charge in the books
	found        bool           // whether the books hold its charge
}

// handleRefund serves POST /v1/refunds.
func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
	s.operate(w, r, fakes.OpRefund, "", parseRefund, s.decideRefund)
}

// handleIntentOp serves POST /v1/payment_intents/{id}/capture and /cancel.
func (s *Server) handleIntentOp(w http.ResponseWriter, r *http.Request, id, verb string) {
	if verb == "capture" {
		s.operate(w, r, fakes.OpCapture, id, parseCapture, s.decideCapture)
		return
	}
	s.operate(w, r, fakes.OpCancel, id, parseCancel, s.decideCancel)
}

// operate runs an operation through the life of a charge request:
// arrival (hook, counters, early faults, scripted by metadata[idempay_op]
// or the PaymentIntent), admission (auth, parameters, the PaymentIntent),
// then execution under the key, where the decision and its record in the
// books are one step with the stored answer.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, typ fakes.OpType, piID string,
	parse func(url.Values) (opParams, *apiError), decide func(opCall) faults.Decision) {
	in, bodyErr := faults.ReadForm(r, fakes.IntentMetadataKey)
	opID := in.Form.Get(metadataPrefix + fakes.OpMetadataKey + "]")
	if typ == fakes.OpRefund {
		piID = in.Form.Get("payment_intent")
	}
	id, g := cmp.Or(opID, piID), s.ops
	fault, ok := g.Arrive(w, in.Key, id, s.hook(in, string(typ)), piID)
	if !ok {
		return
	}
	account, ok := s.admit(w, g, id, in, bodyErr)
	if !ok {
		return
	}
	p, verr := parse(in.Form)
	if verr == nil {
		piID, verr = s.target(typ, account, piID, p)
	}
	if verr != nil {
		status := http.StatusBadRequest
		if verr.Code == "resource_missing" && typ != fakes.OpRefund {
			status = http.StatusNotFound // the PaymentIntent of the path
		}
		s.fail(w, g, id, status, verr)
		return
	}
	s.execute(w, g, account, in, id, fault, func(c faults.Claimed) {
		if s.crash(w, g, id, fault, c) {
			return
		}
		resp, committed := faults.Operate(s.ledger, account, piID, c, func(b fakes.Balance, found bool) faults.Decision {
			pi, _ := s.intents.get(piID)
			return decide(opCall{typ: typ, account: account, key: in.Key, opID: opID, p: p, pi: pi, b: b, found: found})
		})
		if !committed {
			s.inUse(w, g, id) // our lease ran out and another request took the key over
			return
		}
		g.Reply(w, id, resp, false, fault)
	})
}

// target finds the PaymentIntent an operation acts on, in the account.
func (s *Server) target(typ fakes.OpType, account, piID string, p opParams) (string, *apiError) {
	if typ == fakes.OpRefund && p.charge != "" {
		id, ok := s.intents.byCharge(account, p.charge)
		if !ok {
			return "", &apiError{Type: faults.TypeInvalid, Code: "resource_missing", Param: "charge",
				Message: "No such charge: '" + p.charge + "'"}
		}
		piID = id
	}
	if pi, ok := s.intents.get(piID); !ok || pi.account != account {
		param := "intent"
		if typ == fakes.OpRefund {
			param = "payment_intent"
		}
		return "", &apiError{Type: faults.TypeInvalid, Code: "resource_missing", Param: param,
			Message: "No such payment_intent: '" + piID + "'"}
	}
	return piID, nil
}

// refused is a business refusal, stored under the key as Stripe stores
// what it answered once execution started.
func refused(e *apiError) faults.Decision {
	return faults.Decision{Resp: faults.Stored{Status: http.StatusBadRequest, Body: e.body()}}
}

func unexpectedState(msg string) *apiError {
	return &apiError{Type: faults.TypeInvalid, Code: "payment_intent_unexpected_state", Message: msg}
}

func money(amount int64, currency string) string {
	return fmt.Sprintf("%d %s", amount, strings.ToUpper(currency))
}

// decideRefund decides a refund as Stripe does: of a PaymentIntent that
// charged (or whose authorisation was captured), up to what is left.
func (s *Server) decideRefund(c opCall) faults.Decision {
	b, pi := c.b, c.pi
	if !c.found {
		return refused(&apiError{Type: faults.TypeInvalid, Code: "charge_not_refundable", Param: "payment_intent",
			Message: "This PaymentIntent (" + pi.ID + ") does not have a successful charge to refund."})
	}
	amount := cmp.Or(c.p.amount, b.Refundable())
	switch prob := b.Problem(fakes.OpRefund, amount); {
	case amount == 0 || (prob == fakes.RefundExceeds && b.Refundable() == 0 && !s.cfg.Lenient):
		return refused(&apiError{Type: faults.TypeInvalid, Code: "charge_already_refunded",
			Message: "Charge " + deref(pi.LatestCharge) + " has already been refunded."})
	case prob == fakes.RefundExceeds && !s.cfg.Lenient:
		return refused(overRefund(amount, b, pi.Currency))
	case prob != fakes.NoProblem && !s.cfg.Lenient:
		return refused(&apiError{Type: faults.TypeInvalid, Code: "charge_not_refundable", Param: "payment_intent",
			Message: "This PaymentIntent (" + pi.ID + ") does not have a successful charge to refund."})
	}
	now := s.now()
	re := Refund{ID: newID("re_"), Object: "refund", Amount: amount, Charge: deref(pi.LatestCharge), Created: now.Unix(),
		Currency: pi.Currency, Metadata: c.p.metadata, PaymentIntent: pi.ID, Reason: optional(c.p.reason),
		Status: "succeeded", BalanceTransaction: optional(newID("txn_")), account: c.account}
	status := fakes.OpSucceeded
	if s.cfg.pendingRefunds {
		re.Status, re.BalanceTransaction, status = "pending", nil, fakes.OpPending
	}
	return faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(re)},
		Op: &fakes.Op{Type: fakes.OpRefund, ID: re.ID, OpID: c.opID, ChargeID: pi.ID, Merchant: c.account,
			Intent: b.Charge.Intent, Key: c.key, Amount: amount, Currency: pi.Currency, Status: status, Time: now},
		Update: func() { s.intents.addRefund(re) }}
}

// overRefund is Stripe's refusal of a refund above what is left, as a
// real one shows it (provider/stripe/testdata/upstream,
// pay-connector_refund_error_greater_amount.json): invalid_request_error,
// param amount and no code. Nothing refunded yet, the message compares
// with the charge's amount, as that answer's; after partial refunds, with
// what is left (that wording is not confirmed by a recorded answer).
func overRefund(amount int64, b fakes.Balance, currency string) *apiError {
	msg := "Refund amount (" + money(amount, currency) + ") is greater than charge amount (" + money(b.Captured, currency) + ")"
	if b.Refunded > 0 {
		msg = "Refund amount (" + money(amount, currency) + ") is greater than unrefunded amount on charge (" +
			money(b.Refundable(), currency) + ")"
	}
	return &apiError{Type: faults.TypeInvalid, Param: "amount", Message: msg}
}

// decideCapture decides a capture as Stripe does: of a PaymentIntent in
// requires_capture, in part or whole, once.
func (s *Server) decideCapture(c opCall) faults.Decision {
	pi := *c.pi
	amount := cmp.Or(c.p.amount, pi.Amount)
	prob := fakes.NotAuthorization
	if c.found {
		prob = c.b.Problem(fakes.OpCapture, amount)
	}
	switch {
	case prob == fakes.CaptureExceeds && !s.cfg.Lenient:
		return refused(&apiError{Type: faults.TypeInvalid, Code: "amount_too_large", Param: "amount_to_capture",
			Message: "The amount_to_capture (" + money(amount, pi.Currency) + ") is greater than the amount capturable (" +
				money(pi.Amount, pi.Currency) + ")."})
	case prob != fakes.NoProblem && (!s.cfg.Lenient || !c.found):
		return refused(unexpectedState("This PaymentIntent could not be captured because it has a status of " + pi.Status +
			". Only a PaymentIntent with one of the following statuses may be captured: requires_capture."))
	}
	for k, v := range c.p.metadata {
		pi.Metadata[k] = v
	}
	pi.Status, pi.AmountReceived, pi.AmountCapturable = "succeeded", amount, 0
	return faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(pi)},
		Op: &fakes.Op{Type: fakes.OpCapture, ID: pi.ID, OpID: c.opID, ChargeID: pi.ID, Merchant: c.account,
			Intent: c.b.Charge.Intent, Key: c.key, Amount: amount, Currency: pi.Currency, Time: s.now()},
		Update: func() { s.intents.put(pi) }}
}

// cancelable are the statuses Stripe cancels a PaymentIntent in.
var cancelable = []string{"requires_payment_method", "requires_capture", "requires_confirmation", "requires_action", "processing"}

// decideCancel decides a cancel as Stripe does: of a PaymentIntent that
// did not charge; an authorisation it voids is entered in the books.
func (s *Server) decideCancel(c opCall) faults.Decision {
	pi := *c.pi
	ok := false
	for _, st := range cancelable {
		ok = ok || pi.Status == st
	}
	if c.found {
		ok = c.b.Problem(fakes.OpCancel, 0) == fakes.NoProblem || s.cfg.Lenient
	}
	if !ok {
		return refused(unexpectedState("You cannot cancel this PaymentIntent because it has a status of " + pi.Status +
			". Only a PaymentIntent with one of the following statuses may be canceled: " + strings.Join(cancelable, ", ") + "."))
	}
	now := s.now()
	at := now.Unix()
	pi.Status, pi.CancellationReason, pi.CanceledAt, pi.AmountCapturable = "canceled", optional(c.p.reason), &at, 0
	pi.NextAction = nil
	d := faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(pi)}, Update: func() { s.intents.put(pi) }}
	if c.found {
		d.Op = &fakes.Op{Type: fakes.OpCancel, ID: pi.ID, OpID: c.opID, ChargeID: pi.ID, Merchant: c.account,
			Intent: c.b.Charge.Intent, Key: c.key, Amount: c.b.Charge.Amount, Currency: pi.Currency, Time: now}
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
