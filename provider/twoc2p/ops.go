package twoc2p

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

var (
	_ idempay.Refunder      = Provider{}
	_ idempay.RefundFinder  = Provider{}
	_ idempay.Capturer      = Provider{}
	_ idempay.CaptureFinder = Provider{}
	_ idempay.Canceller     = Provider{}
	_ idempay.CancelFinder  = Provider{}
)

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

// ValidateRefund refuses, before anything is stored, a refund the adapter
// cannot send: without Provider.Maintenance (ErrNotSupported, outcome
// failed), with a Reason or Metadata (Payment Maintenance has no place for
// them), or an amount the currency cannot express.
func (p Provider) ValidateRefund(op idempay.OpRequest) error { return p.validateOp(op) }

// ValidateCapture refuses what ValidateRefund refuses.
func (p Provider) ValidateCapture(op idempay.OpRequest) error { return p.validateOp(op) }

// ValidateCancel refuses what ValidateRefund refuses.
func (p Provider) ValidateCancel(op idempay.OpRequest) error { return p.validateOp(op) }

func (p Provider) validateOp(op idempay.OpRequest) error {
	if err := p.opConfig(); err != nil {
		return &idempay.OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: idempay.OutcomeFailed,
			Err: fmt.Errorf("%w: %w", idempay.ErrNotSupported, err)}
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

// NewRefundRequest builds the sealed Payment Maintenance refund (processType
// R) of op.Amount of the charge's invoice, carrying key as idempotencyID
// (and in KeyHeader). The request is the same bytes however often it is
// built.
func (p Provider) NewRefundRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return p.newOpRequest(ctx, t, op, key, processRefund)
}

// NewCaptureRequest builds the sealed settlement (processType S) of
// op.Amount of the charge's authorisation: 2C2P's "capture / settle a
// pre-authorised transaction", in part or in whole.
func (p Provider) NewCaptureRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return p.newOpRequest(ctx, t, op, key, processSettle)
}

// NewCancelRequest builds the sealed void (processType V) of the charge's
// authorisation. A void carries no amount.
func (p Provider) NewCancelRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return p.newOpRequest(ctx, t, op, key, processVoid)
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

// ReadRefund reads the answer to a refund; see OPERATIONS.md.
func (p Provider) ReadRefund(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(idempay.OpRefund, resp, body)
}

// ReadCapture reads the answer to a settlement; see OPERATIONS.md.
func (p Provider) ReadCapture(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(idempay.OpCapture, resp, body)
}

// ReadCancel reads the answer to a void; see OPERATIONS.md.
func (p Provider) ReadCancel(resp *http.Response, body []byte) idempay.Verdict {
	return readOp(idempay.OpCancel, resp, body)
}

func readOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	var f *opFacts
	if resp.Request != nil {
		f, _ = resp.Request.Context().Value(opFactsKey{}).(*opFacts)
	}
	if f == nil || f.typ != t {
		// Not a request this adapter built: there are no keys to open the
		// answer with, so it cannot settle anything.
		return unknownVerdict("unverifiable", "answer to a request not built by this adapter's New"+string(t)+"Request")
	}
	a, err := readAction(body, f.keys)
	if v, done := actionByStatus(resp.StatusCode, a, err, body); done {
		return v
	}
	return f.verdict(a)
}

// FindRefund asks Refund Status (processType RS) for the refunds of the
// charge's invoice and looks for the one made under rec.Key (the
// idempotencyID it was sent with); see OPERATIONS.md. It returns an error
// only when no answer came back.
func (p Provider) FindRefund(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	invoiceNo, act, err := p.lookupOp(ctx, hc, t, op, processRefundStatus)
	if err != nil {
		return idempay.Verdict{}, err
	}
	return refundFound(act, p.MerchantID, op, rec, invoiceNo), nil
}

// FindCapture asks Payment Inquiry of Payment Maintenance (processType I)
// how the charge's transaction stands; see OPERATIONS.md.
func (p Provider) FindCapture(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	invoiceNo, act, err := p.lookupOp(ctx, hc, t, op, processInquiry)
	if err != nil {
		return idempay.Verdict{}, err
	}
	return statusFound(act, p.MerchantID, op, invoiceNo, captureByStatus), nil
}

// FindCancel asks Payment Inquiry of Payment Maintenance (processType I)
// how the charge's transaction stands; see OPERATIONS.md.
func (p Provider) FindCancel(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	invoiceNo, act, err := p.lookupOp(ctx, hc, t, op, processInquiry)
	if err != nil {
		return idempay.Verdict{}, err
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
