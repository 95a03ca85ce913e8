package omisetest

import (
	"cmp"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// opParams is a validated refund or capture body.
type opParams struct {
	amount   int64 // amount (refund, required), capture_amount (capture; 0: all)
	metadata map[string]any
}

// parseOp validates an operation's form: a refund takes amount (required),
// metadata[...] and void; a capture capture_amount; a reverse nothing.
// The fake refuses parameters it does not know, as it does for charges.
func parseOp(typ fakes.OpType, form url.Values) (opParams, string, string) {
	p := opParams{metadata: map[string]any{}}
	for name, vals := range form {
		v := vals[len(vals)-1]
		k, isMeta := strings.CutPrefix(name, "metadata[")
		switch {
		case typ == fakes.OpRefund && isMeta && strings.HasSuffix(k, "]"):
			p.metadata[strings.TrimSuffix(k, "]")] = v
		case typ == fakes.OpRefund && name == "amount", typ == fakes.OpCapture && name == "capture_amount":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return p, "invalid_amount", name + " must be a positive integer"
			}
			p.amount = n
		case typ == fakes.OpRefund && name == "void":
			if _, err := strconv.ParseBool(v); err != nil {
				return p, "bad_request", "void must be true or false"
			}
		default:
			return p, "bad_request", "unknown parameter " + name
		}
	}
	if typ == fakes.OpRefund && p.amount == 0 {
		return p, "invalid_amount", "amount is required"
	}
	return p, "", ""
}

// opCall is an operation being decided.
type opCall struct {
	typ          fakes.OpType
	account, key string
	opID         string // metadata[idempay_op]
	p            opParams
	ch           Charge        // as it stands now
	b            fakes.Balance // its balance in the books
	found        bool          // whether the books hold it
}

// operate runs POST /charges/{id}/refunds, /capture and /reverse through
// the life of a charge request: arrival (hook, counters, early faults,
// scripted by metadata[idempay_op] or the charge), admission (auth, the
// charge, parameters), then execution (under the key when keys are
// honoured), where the decision and its record in the books are one step
// with the answer.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, typ fakes.OpType, chargeID string) {
	in, bodyErr := faults.ReadForm(r, fakes.IntentMetadataKey)
	opID := in.Form.Get("metadata[" + fakes.OpMetadataKey + "]")
	id, g := cmp.Or(opID, chargeID), s.ops
	fault, ok := g.Arrive(w, in.Key, id, s.hook(in, string(typ), chargeID), chargeID)
	if !ok {
		return
	}
	account, ok := s.admit(w, g, id, in, bodyErr)
	if !ok {
		return
	}
	if c, found := s.store.get(chargeID); !found || c.account != account {
		s.fail(w, g, id, "not_found", "charge "+chargeID+" was not found")
		return
	}
	p, code, msg := parseOp(typ, in.Form)
	if code != "" {
		s.fail(w, g, id, code, msg)
		return
	}
	s.execute(w, g, account, in, id, fault, func(c faults.Claimed) {
		if s.crash(w, g, id, fault, c) {
			return
		}
		resp, committed := faults.Operate(s.ledger, account, chargeID, c, func(b fakes.Balance, found bool) faults.Decision {
			ch, _ := s.store.get(chargeID)
			return s.decide(opCall{typ: typ, account: account, key: in.Key, opID: opID, p: p, ch: ch, b: b, found: found})
		})
		if !committed {
			s.inUse(w, g, id)
			return
		}
		g.Reply(w, id, resp, false, fault)
	})
}

// refusal is Omise's error, stored under an honoured key like any answer.
func refusal(code, message string) faults.Decision {
	status, body := errorBody(code, message)
	return faults.Decision{Resp: faults.Stored{Status: status, Body: body}}
}

func (s *Server) decide(c opCall) faults.Decision {
	switch c.typ {
	case fakes.OpRefund:
		return s.decideRefund(c)
	case fakes.OpCapture:
		return s.decideCapture(c)
	}
	return s.decideReverse(c)
}

// decideRefund decides a refund as Omise does: of a paid charge, up to
// what is left, fewer than 15 of them.
func (s *Server) decideRefund(c opCall) faults.Decision {
	prob := fakes.NotCaptured
	if c.found {
		prob = c.b.Problem(fakes.OpRefund, c.p.amount)
	}
	lenient := s.cfg.Lenient && c.found
	switch {
	case len(c.ch.Refunds.Data) >= maxRefunds:
		return refusal("failed_refund", "the charge already has the most refunds Omise allows")
	case prob == fakes.RefundExceeds && !lenient:
		return refusal("invalid_amount", "the amount is greater than the refundable amount of the charge")
	case prob != fakes.NoProblem && !lenient:
		return refusal("failed_refund", "charge "+c.ch.ID+" is not refundable")
	}
	now := s.now()
	re := Refund{Object: "refund", ID: newID("rfnd"), Amount: c.p.amount, Currency: c.ch.Currency, Charge: c.ch.ID,
		Transaction: newID("trxn"), Created: now.UTC().Format(time.RFC3339), Status: "closed", Metadata: c.p.metadata,
		FundingAmount: c.p.amount, FundingCurrency: c.ch.Currency}
	re.Location = "/charges/" + c.ch.ID + "/refunds/" + re.ID
	status := fakes.OpSucceeded
	if s.cfg.pendingRefunds {
		re.Status, status = "pending", fakes.OpPending
	}
	return faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(re)},
		Op: &fakes.Op{Type: fakes.OpRefund, ID: re.ID, OpID: c.opID, ChargeID: c.ch.ID, Merchant: c.account,
			Intent: c.b.Charge.Intent, Key: c.key, Amount: c.p.amount, Currency: c.ch.Currency, Status: status, Time: now},
		Update: func() {
			s.store.update(c.ch.ID, func(ch *Charge) {
				ch.RefundedAmount += re.Amount
				ch.Refunds.Data = append(ch.Refunds.Data, re)
				ch.Refunds.Total, ch.Refunds.To = len(ch.Refunds.Data), re.Created
			})
		}}
}

// decideCapture decides a capture as Omise does: of an authorised charge
// made with capture false, once, in part (capture_amount) or whole.
func (s *Server) decideCapture(c opCall) faults.Decision {
	amount := cmp.Or(c.p.amount, c.ch.Amount)
	prob := fakes.NotAuthorization
	if c.found {
		prob = c.b.Problem(fakes.OpCapture, amount)
	}
	lenient := s.cfg.Lenient && c.found
	switch {
	case prob == fakes.CaptureExceeds && !lenient:
		return refusal("invalid_amount", "capture_amount is greater than the authorized amount")
	case prob != fakes.NoProblem && !lenient:
		return refusal("failed_capture", "charge "+c.ch.ID+" is not capturable")
	}
	ch := c.ch
	ch.Status, ch.Paid, ch.captured = "successful", true, amount
	ch.derive()
	return faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(ch)},
		Op: &fakes.Op{Type: fakes.OpCapture, ID: ch.ID, OpID: c.opID, ChargeID: ch.ID, Merchant: c.account,
			Intent: c.b.Charge.Intent, Key: c.key, Amount: amount, Currency: ch.Currency, Time: s.now()},
		Update: func() {
			s.store.update(ch.ID, func(x *Charge) { x.Status, x.Paid, x.captured = ch.Status, true, amount })
		}}
}

// decideReverse decides a reverse as Omise does: of an authorisation not
// captured, which releases the hold.
func (s *Server) decideReverse(c opCall) faults.Decision {
	prob := fakes.NotAuthorization
	if c.found {
		prob = c.b.Problem(fakes.OpCancel, 0)
	}
	if prob != fakes.NoProblem && !(s.cfg.Lenient && c.found) {
		return refusal("invalid_charge", "charge "+c.ch.ID+" is not reversible")
	}
	now := s.now()
	at := now.UTC().Format(time.RFC3339)
	ch := c.ch
	ch.Status, ch.Reversed, ch.ReversedAt = "reversed", true, &at
	ch.derive()
	return faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: mustJSON(ch)},
		Op: &fakes.Op{Type: fakes.OpCancel, ID: ch.ID, OpID: c.opID, ChargeID: ch.ID, Merchant: c.account,
			Intent: c.b.Charge.Intent, Key: c.key, Amount: ch.Amount, Currency: ch.Currency, Time: now},
		Update: func() {
			s.store.update(ch.ID, func(x *Charge) { x.Status, x.Reversed, x.ReversedAt = ch.Status, true, &at })
		}}
}

// CompleteRefund settles a pending refund (WithPendingRefunds): it closes,
// or fails and frees its amount in the books. It reports whether a pending
// refund was found.
func (s *Server) CompleteRefund(id string, succeed bool) bool {
	var account string
	found := s.store.updateRefund(id, func(ch *Charge, re *Refund) {
		if re.Status != "pending" {
			return
		}
		account, re.Status = ch.account, "closed"
		if !succeed {
			re.Status = "failed"
			ch.RefundedAmount -= re.Amount
		}
	})
	if !found || account == "" {
		return false
	}
	status := fakes.OpSucceeded
	if !succeed {
		status = fakes.OpFailed
	}
	s.ledger.SetStatus(account, id, status)
	return true
}

// Refunds returns the refunds of a charge, oldest first.
func (s *Server) Refunds(chargeID string) []Refund {
	c, ok := s.store.get(chargeID)
	if !ok {
		return nil
	}
	return c.Refunds.Data
}
