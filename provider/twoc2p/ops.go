package twoc2p

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

var _ idempay.Operator = Provider{}

// maxKeyLen is the longest key the idempotencyID element takes (C100, as
// in the token request).
const maxKeyLen = 100

// opFacts travel in a maintenance request's context from its builder to
// its reader, which the seam gives only the response: the keys to open the
// answer with, and what the answer must name.
type opFacts struct {
	keys      MaintenanceKeys
	typ       idempay.OpType
	process   string
	merchant  string
	invoiceNo string
	key       string
	amount    int64
	currency  string
}

type opFactsKey struct{}

// String keeps the keys out of a printed context.
func (*opFacts) String() string { return "2c2p maintenance request" }

// Operates reports that the adapter makes refunds, captures (2C2P's
// settlement) and cancels (2C2P's void) through Payment Maintenance, and
// looks each up; ValidateOp refuses them when the Provider is not set up
// for Payment Maintenance.
func (Provider) Operates(idempay.OpType) (makes, finds bool) { return true, true }

// ValidateOp refuses, before anything is stored, an operation the adapter
// cannot send: without Provider.Maintenance (an error matching
// idempay.ErrNotSupported, outcome failed), with a Reason or Metadata
// (Payment Maintenance has no place for them), or an amount the currency
// cannot express.
func (p Provider) ValidateOp(op idempay.OpRequest) error {
	if err := p.opConfig(); err != nil {
		return fmt.Errorf("%w: %w", idempay.ErrNotSupported, err)
	}
	switch {
	case op.Reason != "":
		return wire.Invalid("Reason", "has no place in a 2C2P Payment Maintenance request")
	case len(op.Metadata) > 0:
		return wire.Invalid("Metadata", "has no place in a 2C2P Payment Maintenance request")
	}
	if _, err := p.invoiceNo(op.IntentID, 1); err != nil {
		return err
	}
	if op.Type != idempay.OpCancel && op.Amount > 0 {
		if _, err := idempay.TwoC2PAmount(op.Amount, op.Currency); err != nil {
			return wire.Invalid("Currency", "%v", err)
		}
	}
	return nil
}

// opConfig says what the Provider lacks for Payment Maintenance.
func (p Provider) opConfig() error {
	if p.MerchantID == "" {
		return fmt.Errorf("twoc2p: Provider.MerchantID is required")
	}
	if err := p.Maintenance.Check(); err != nil {
		return err
	}
	if p.MaintenanceURL != "" {
		return checkMaintenanceURL(p.MaintenanceURL)
	}
	return nil
}

// processOf is the Payment Maintenance processType of each operation:
// refund (R), settlement of a pre-authorised transaction (S: a capture, in
// part or in whole), void (V: a cancel, which carries no amount).
var processOf = map[idempay.OpType]string{idempay.OpRefund: processRefund, idempay.OpCapture: processSettle,
	idempay.OpCancel: processVoid}

// NewOpRequest builds the sealed Payment Maintenance request of op on the
// charge's invoice, carrying key as idempotencyID (and in KeyHeader). The
// request is the same bytes however often it is built.
func (p Provider) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return p.newOpRequest(ctx, t, op, key, processOf[op.Type])
}

func (p Provider) newOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key, process string) (*http.Request, error) {
	if err := p.opConfig(); err != nil {
		return nil, err
	}
	if key == "" || len(key) > maxKeyLen || !wire.Printable(key) {
		return nil, wire.Invalid("Key", "must be 1 to %d printable characters to fit idempotencyID", maxKeyLen)
	}
	invoiceNo, err := p.opInvoiceNo(op)
	if err != nil {
		return nil, err
	}
	req := actionRequest{InvoiceNo: invoiceNo, ProcessType: process, IdempotencyID: key}
	if process != processVoid {
		if req.ActionAmount, err = idempay.TwoC2PAmount(op.Amount, op.Currency); err != nil {
			return nil, wire.Invalid("Amount", "%v", err)
		}
	}
	f := &opFacts{keys: p.Maintenance, typ: op.Type, process: process, merchant: p.MerchantID, invoiceNo: invoiceNo,
		key: key, amount: op.Amount, currency: op.Currency}
	return p.newAction(context.WithValue(ctx, opFactsKey{}, f), t, req, key)
}

// maxAttemptScan bounds the attempts whose invoiceNo opInvoiceNo compares
// with the charge's reference.
const maxAttemptScan = 32

// opInvoiceNo is the invoice of the intent's charge: the invoiceNo of the
// attempt that succeeded (op.ChargeAttempt), or for a charge recorded
// before attempts existed, op.ChargeRef when it is an invoiceNo of the
// intent (an attempt's, or an earlier version's spelling), else attempt 1's.
// A paid charge's ChargeRef is 2C2P's tranRef, which Payment Maintenance
// does not take.
func (p Provider) opInvoiceNo(op idempay.OpRequest) (string, error) {
	if op.ChargeAttempt > 0 {
		return p.invoiceNo(op.IntentID, op.ChargeAttempt)
	}
	if op.ChargeRef != "" {
		for n := 1; n <= maxAttemptScan; n++ {
			inv, err := p.invoiceNo(op.IntentID, n)
			if err != nil {
				break
			}
			if inv == op.ChargeRef {
				return inv, nil
			}
		}
		if legacy := legacyInvoiceNo(op.IntentID, idempay.TwoC2PHasQRChannel(p.channels())); legacy == op.ChargeRef {
			return legacy, nil
		}
	}
	return p.invoiceNo(op.IntentID, 1)
}

// ReadOp reads the answer to an operation of type t; see OPERATIONS.md.
func (Provider) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	var f *opFacts
	if resp.Request != nil {
		f, _ = resp.Request.Context().Value(opFactsKey{}).(*opFacts)
	}
	if f == nil || f.typ != t {
		// Not a request this adapter built: there are no keys to open the
		// answer with, so it cannot settle anything.
		return unknownVerdict("unverifiable", "answer to a request not built by this adapter's NewOpRequest for a "+string(t))
	}
	a, err := readAction(body, f.keys)
	if v, done := actionByStatus(resp.StatusCode, a, err, body); done {
		return v
	}
	return f.verdict(a)
}

// FindOp looks the operation up; see OPERATIONS.md. A refund is looked
// for by Refund Status (processType RS) among the refunds of the charge's
// invoice, made under rec.Key (the idempotencyID it was sent with); a
// capture or cancel by Payment Inquiry of Payment Maintenance (processType
// I), from how the charge's transaction stands. It returns an error only
// when no answer came back.
func (p Provider) FindOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	process := processInquiry
	if op.Type == idempay.OpRefund {
		process = processRefundStatus
	}
	invoiceNo, act, err := p.lookupOp(ctx, hc, t, op, process)
	switch {
	case err != nil:
		return idempay.Verdict{}, err
	case op.Type == idempay.OpRefund:
		return refundFound(act, p.MerchantID, op, rec, invoiceNo), nil
	case op.Type == idempay.OpCapture:
		return statusFound(act, p.MerchantID, op, invoiceNo, captureByStatus), nil
	}
	return statusFound(act, p.MerchantID, op, invoiceNo, cancelByStatus), nil
}

func (p Provider) lookupOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, process string) (string, action, error) {
	if err := p.opConfig(); err != nil {
		return "", action{}, err
	}
	invoiceNo, err := p.opInvoiceNo(op)
	if err != nil {
		return "", action{}, err
	}
	act, err := p.inquireAction(ctx, hc, t, process, invoiceNo)
	return invoiceNo, act, err
}

// operation is the Verdict.Operation of a found or answered operation.
func operation(id, status string, k idempay.Kind, amount int64, currency string) *idempay.Operation {
	o := &idempay.Operation{ID: id, Status: status, State: idempay.StateSucceeded, Amount: amount, Currency: currency}
	if k == idempay.KindPending {
		o.State = idempay.StatePending
	}
	return o
}

func unknownVerdict(code, why string) idempay.Verdict {
	return idempay.Verdict{Kind: idempay.KindUnknown, Err: &idempay.APIError{Code: code, Message: why}}
}
