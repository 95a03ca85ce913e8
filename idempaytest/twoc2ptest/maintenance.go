package twoc2ptest

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// ActionVersion is the version of Payment Maintenance's XML that 2C2P's
// current documentation shows.
const ActionVersion = "4.3"

// The process types of Payment Maintenance.
const (
	ProcessInquiry      = "I"  // inquire a transaction
	ProcessVoid         = "V"  // void an authorisation before settlement
	ProcessSettle       = "S"  // settle (capture) an authorisation
	ProcessRefund       = "R"  // refund a settled transaction
	ProcessRefundStatus = "RS" // the refunds of an invoice
)

// PaymentProcessRequest is a maintenance request's XML, as 2C2P documents
// it (version, merchantID, invoiceNo, actionAmount in major units,
// processType), with an idempotencyID element of the fake's: a merchant's
// reference of the action, recorded and listed by Refund Status, which
// de-duplicates with WithMaintenanceKeys.
type PaymentProcessRequest struct {
	XMLName       xml.Name `xml:"PaymentProcessRequest"`   // PaymentProcessRequest
	Version       string   `xml:"version"`                 // ActionVersion
	MerchantID    string   `xml:"merchantID"`              // the merchant's
	InvoiceNo     string   `xml:"invoiceNo"`               // the payment's
	ActionAmount  string   `xml:"actionAmount,omitempty"`  // major units, e.g. 25.00; none for I, V, RS
	ProcessType   string   `xml:"processType"`             // I, V, S, R or RS
	IdempotencyID string   `xml:"idempotencyID,omitempty"` // the fake's element: a reference of the action
}

// PaymentProcessResponse is a maintenance answer's XML. respCode is one of
// 2C2P's Payment Maintenance result codes (00 success, 15 invalid invoice,
// 16 no such transaction, 18 invalid amount, 21 void not allowed, 29
// already voided, 30 beyond the amount, 39 already settled, 40 refund
// beyond the amount, 41 refund not allowed, 49 fully refunded, 50 and 51
// for an idempotencyID, 99 failure, ...); status one of its Payment
// Maintenance status codes (A approved, S settled, V voided, RF refund
// confirmed, RP refund pending, RFF refund failed, AP awaiting, PF failed).
type PaymentProcessResponse struct {
	XMLName       xml.Name      `xml:"PaymentProcessResponse"`      // PaymentProcessResponse
	Version       string        `xml:"version"`                     // ActionVersion
	TimeStamp     string        `xml:"timeStamp"`                   // ddMMyyHHmmss
	RespCode      string        `xml:"respCode"`                    // a Payment Maintenance result code
	RespDesc      string        `xml:"respDesc"`                    // its description
	ProcessType   string        `xml:"processType,omitempty"`       // the request's
	InvoiceNo     string        `xml:"invoiceNo,omitempty"`         // the request's
	Amount        string        `xml:"amount,omitempty"`            // acted on, or the payment's
	Status        string        `xml:"status,omitempty"`            // a Payment Maintenance status code
	ReferenceNo   string        `xml:"referenceNo,omitempty"`       // the refund's, or the transaction's tranRef
	IdempotencyID string        `xml:"idempotencyID,omitempty"`     // the request's, echoed
	Refunds       []RefundEntry `xml:"refundList>refund,omitempty"` // Refund Status
}

// RefundEntry is one refund as Refund Status lists it.
type RefundEntry struct {
	ReferenceNo   string `xml:"referenceNo"`             // the gateway's
	Amount        string `xml:"amount"`                  // major units
	Status        string `xml:"status"`                  // RF, RP, RFF
	IdempotencyID string `xml:"idempotencyID,omitempty"` // the request's, if any
	DateTime      string `xml:"dateTime"`                // ddMMyyHHmmss
}

var actionDescs = map[string]string{
	"00": "Success", "03": "Invalid Merchant ID", "12": "Transaction status is not valid to perform your action.",
	"13": "Invalid hash value.", "15": "Invalid invoice number.", "16": "Requested transaction doesn't exist.",
	"17": "Request type is invalid.", "18": "Invalid Action Amount.", "21": "Void not allowed.",
	"29": "Transaction is already voided.", "30": "Unable to refund/settle more than transaction amount.",
	"39": "Transaction is already settled.", "40": "Refund amount is more than transaction amount.",
	"41": "Refund not allowed.", "49": "Transaction is already fully refunded.",
	"50": "Same Idempotent Key exists with different Type", "51": "Same Idempotent Key exists with status Pending",
	"96": "Unable to decrypt.", "99": "Unable to complete the request.",
}

// maintain serves POST MaintenancePath: the sealed XML opened and checked,
// then the life of a token request (hook, counters, faults scripted by
// invoiceNo or idempotencyID), executed under the idempotencyID with
// WithMaintenanceKeys, its decision and its record in the books one step
// with the sealed answer.
func (s *Server) maintain(w http.ResponseWriter, r *http.Request) {
	req, code := s.openAction(r)
	if code != "" {
		s.count(func(st *Stats) { st.Rejected++ })
		s.plainAction(w, http.StatusOK, code)
		return
	}
	g := s.gates[Maintenance]
	info := RequestInfo{Endpoint: Maintenance, MerchantID: req.MerchantID, InvoiceNo: req.InvoiceNo,
		IdempotencyID: req.IdempotencyID, ProcessType: req.ProcessType, Action: &req, Request: r}
	f, ok := g.Arrive(w, req.IdempotencyID, req.InvoiceNo, s.hook(info), req.IdempotencyID)
	if !ok {
		return
	}
	if f == fakes.Internal {
		g.Traffic.Fault(f)
		g.Send(w, req.InvoiceNo, http.StatusInternalServerError, s.actionXML(PaymentProcessResponse{RespCode: "99"}), "99", false)
		return
	}
	key := req.IdempotencyID
	if !s.cfg.maintenanceKeys {
		key = ""
	}
	fp := req.ProcessType + "\x00" + req.InvoiceNo + "\x00" + req.ActionAmount
	s.keys.Execute(req.MerchantID, key, fp, s.cfg.Clock(), faults.Outcomes{
		Mismatch: func() { s.sealedAction(w, g, req, PaymentProcessResponse{RespCode: "50"}) },
		InUse:    func() { s.sealedAction(w, g, req, PaymentProcessResponse{RespCode: "51"}) },
		Replay:   func(resp faults.Stored) { g.Reply(w, req.InvoiceNo, resp, false, f) },
		Run: func(c faults.Claimed) {
			if f == fakes.Mid {
				g.Drop(w, f)
				return
			}
			resp, committed := s.act(req, c)
			if !committed {
				s.sealedAction(w, g, req, PaymentProcessResponse{RespCode: "51"})
				return
			}
			g.Reply(w, req.InvoiceNo, resp, false, f)
		},
	})
}

// openAction reads, verifies and decrypts a maintenance request, or says
// which plain respCode refuses it: 13 for a signature that does not verify,
// 96 for what does not decrypt or parse, 03 for another merchant.
func (s *Server) openAction(r *http.Request) (PaymentProcessRequest, string) {
	var req PaymentProcessRequest
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || s.jose.load() != nil {
		return req, "99"
	}
	plain, err := Open(string(raw), s.jose.merchant, s.jose.gateway)
	switch {
	case err == ErrSignature:
		return req, "13"
	case err != nil || xml.Unmarshal(plain, &req) != nil:
		return req, "96"
	case req.MerchantID != s.cfg.merchantID:
		return req, "03"
	}
	return req, ""
}

// act decides a maintenance request on the transaction and the books, and
// commits the sealed answer with its record.
func (s *Server) act(req PaymentProcessRequest, c faults.Claimed) (faults.Stored, bool) {
	return faults.Operate(s.ledger, req.MerchantID, req.InvoiceNo, c, func(b fakes.Balance, found bool) faults.Decision {
		s.mu.Lock()
		var snap *Transaction
		if t := s.txns[req.InvoiceNo]; t != nil {
			cp := t.clone()
			snap = &cp
		}
		s.mu.Unlock()
		answer, op, update := s.decideAction(req, snap, b, found)
		d := faults.Decision{Resp: faults.Stored{Status: http.StatusOK, Body: s.sealAction(answer)}, Op: op}
		if update != nil {
			d.Update = func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				update(s.txns[req.InvoiceNo])
			}
		}
		return d
	})
}

// decideAction is the answer 2C2P gives a maintenance request on t (nil:
// no such transaction), the op to enter in the books and the change to t.
func (s *Server) decideAction(req PaymentProcessRequest, t *Transaction, b fakes.Balance,
	found bool) (PaymentProcessResponse, *fakes.Op, func(*Transaction)) {
	a := PaymentProcessResponse{ProcessType: req.ProcessType, InvoiceNo: req.InvoiceNo, IdempotencyID: req.IdempotencyID}
	fail := func(code string) (PaymentProcessResponse, *fakes.Op, func(*Transaction)) {
		a.RespCode = code
		return a, nil, nil
	}
	switch {
	case req.InvoiceNo == "":
		return fail("15")
	case t == nil:
		return fail("16")
	}
	a.Amount, a.Status, a.ReferenceNo = t.Amount, txnStatus(t), t.TranRef
	switch req.ProcessType {
	case ProcessInquiry:
		a.RespCode = "00"
		return a, nil, nil
	case ProcessRefundStatus:
		a.RespCode = "00"
		for _, rf := range t.Refunds {
			a.Refunds = append(a.Refunds, RefundEntry{ReferenceNo: rf.ReferenceNo, Amount: rf.Amount, Status: rf.Status,
				IdempotencyID: rf.IdempotencyID, DateTime: rf.DateTime.Format(stamp)})
		}
		return a, nil, nil
	case ProcessVoid, ProcessSettle, ProcessRefund:
	default:
		return fail("17")
	}
	if t.State != Paid || !found {
		return fail("12")
	}
	amount, err := b.Charge.Amount, error(nil)
	if req.ProcessType != ProcessVoid && req.ActionAmount != "" {
		amount, err = toMinor(req.ActionAmount, t.CurrencyCode)
	}
	if err != nil || amount <= 0 {
		return fail("18")
	}
	return s.decideMoney(req, t, b, amount, a)
}

// decideMoney decides a void, settlement or refund of a paid transaction.
func (s *Server) decideMoney(req PaymentProcessRequest, t *Transaction, b fakes.Balance, amount int64,
	a PaymentProcessResponse) (PaymentProcessResponse, *fakes.Op, func(*Transaction)) {
	typ := map[string]fakes.OpType{ProcessVoid: fakes.OpCancel, ProcessSettle: fakes.OpCapture, ProcessRefund: fakes.OpRefund}[req.ProcessType]
	prob := b.Problem(typ, amount)
	if s.cfg.Lenient {
		prob = fakes.NoProblem
	}
	if code := actionRefusal(typ, prob, t, b); code != "" {
		a.RespCode = code
		return a, nil, nil
	}
	now := s.cfg.Clock()
	op := &fakes.Op{Type: typ, ID: t.InvoiceNo, OpID: req.IdempotencyID, ChargeID: t.InvoiceNo, Merchant: t.MerchantID,
		Intent: t.InvoiceNo, Key: req.IdempotencyID, Amount: amount, Currency: t.CurrencyCode, Time: now}
	a.RespCode, a.Amount = "00", toMajor(amount, t.CurrencyCode)
	var update func(*Transaction)
	switch typ {
	case fakes.OpCancel:
		a.Status = "V"
		update = func(x *Transaction) { x.Voided = true }
	case fakes.OpCapture:
		a.Status = "S"
		update = func(x *Transaction) { x.Settled = true }
	case fakes.OpRefund:
		rf := RefundRecord{ReferenceNo: s.newRefundRef(), IdempotencyID: req.IdempotencyID, Amount: a.Amount, Status: "RF",
			DateTime: now}
		if s.cfg.pendingRefunds {
			rf.Status, op.Status = "RP", fakes.OpPending
		}
		op.ID, a.Status, a.ReferenceNo = rf.ReferenceNo, rf.Status, rf.ReferenceNo
		update = func(x *Transaction) { x.Refunds = append(x.Refunds, rf) }
	}
	return a, op, update
}

// actionRefusal is the respCode refusing an operation the books or the
// transaction do not allow, or "".
func actionRefusal(typ fakes.OpType, prob fakes.Problem, t *Transaction, b fakes.Balance) string {
	switch {
	case prob == fakes.NoProblem:
		return ""
	case typ == fakes.OpCancel && t.Voided, typ == fakes.OpCapture && t.Voided:
		return "29"
	case typ == fakes.OpCancel:
		return "21"
	case typ == fakes.OpCapture && prob == fakes.CaptureExceeds:
		return "30"
	case typ == fakes.OpCapture:
		return "39"
	case prob == fakes.RefundExceeds && b.Refundable() == 0:
		return "49"
	case prob == fakes.RefundExceeds:
		return "40"
	}
	return "41"
}

// txnStatus is a transaction's Payment Maintenance status code.
func txnStatus(t *Transaction) string {
	switch {
	case t.Voided:
		return "V"
	case t.State == Paid && t.Settled:
		return "S"
	case t.State == Paid:
		return "A"
	case t.State == Declined:
		return "PF"
	}
	return "AP"
}

// stamp is the layout of 2C2P's timeStamp and dateTime: ddMMyyHHmmss.
const stamp = "020106150405"

// actionXML completes and encodes an answer.
func (s *Server) actionXML(a PaymentProcessResponse) []byte {
	a.Version, a.TimeStamp = ActionVersion, s.cfg.Clock().UTC().Format(stamp)
	if a.RespDesc == "" {
		a.RespDesc = actionDescs[a.RespCode]
	}
	b, err := xml.Marshal(a)
	if err != nil { // a struct of strings: cannot fail
		panic("twoc2ptest: " + err.Error())
	}
	return b
}

// sealAction encodes an answer and seals it to the merchant.
func (s *Server) sealAction(a PaymentProcessResponse) []byte {
	tok, err := Seal(s.actionXML(a), s.jose.merchant, s.jose.gateway)
	if err != nil {
		panic("twoc2ptest: seal: " + err.Error())
	}
	return []byte(tok)
}

// sealedAction answers a sealed refusal, counted and not stored.
func (s *Server) sealedAction(w http.ResponseWriter, g *faults.Gate, req PaymentProcessRequest, a PaymentProcessResponse) {
	a.ProcessType, a.InvoiceNo, a.IdempotencyID = req.ProcessType, req.InvoiceNo, req.IdempotencyID
	g.Send(w, req.InvoiceNo, http.StatusOK, s.sealAction(a), a.RespCode, false)
}

// plainAction answers a request the server could not open: plain XML.
func (s *Server) plainAction(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = w.Write(s.actionXML(PaymentProcessResponse{RespCode: code}))
}

// newRefundRef returns the next refund reference.
func (s *Server) newRefundRef() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tranSeq++
	return fmt.Sprintf("R%09d", 7000000+s.tranSeq)
}

// CompleteRefund settles a pending refund (WithPendingRefunds) by its
// referenceNo: confirmed (RF), or failed (RFF), which frees its amount in
// the books. It reports whether a pending refund was found.
func (s *Server) CompleteRefund(referenceNo string, succeed bool) bool {
	s.mu.Lock()
	merchant := ""
	for _, t := range s.txns {
		for i := range t.Refunds {
			if rf := &t.Refunds[i]; rf.ReferenceNo == referenceNo && rf.Status == "RP" {
				rf.Status, merchant = "RF", t.MerchantID
				if !succeed {
					rf.Status = "RFF"
				}
			}
		}
	}
	s.mu.Unlock()
	if merchant == "" {
		return false
	}
	status := fakes.OpSucceeded
	if !succeed {
		status = fakes.OpFailed
	}
	return s.ledger.SetStatus(merchant, referenceNo, status)
}

// ActionRequest returns the XML of a maintenance request of this server's
// merchant, for tests that speak Payment Maintenance by hand.
func (s *Server) ActionRequest(processType, invoiceNo, actionAmount, idempotencyID string) []byte {
	b, _ := xml.Marshal(PaymentProcessRequest{Version: ActionVersion, MerchantID: s.cfg.merchantID, InvoiceNo: invoiceNo,
		ActionAmount: actionAmount, ProcessType: strings.ToUpper(processType), IdempotencyID: idempotencyID})
	return b
}
