package refserver

import (
	"encoding/json"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// opType is one of the operations the server serves beyond the charge.
type opType struct {
	name    string       // "refund", "capture", "cancel"
	idField string       // the body member and lookup parameter naming it
	typ     fakes.OpType // as the books record it
}

var (
	opRefund  = opType{"refund", "refund_id", fakes.OpRefund}
	opCapture = opType{"capture", "capture_id", fakes.OpCapture}
	opCancel  = opType{"cancel", "cancel_id", fakes.OpCancel}
)

// opRequest is the body of POST RefundPath, CapturePath or CancelPath:
//
//	{"refund_id" | "capture_id" | "cancel_id", "order_id", "charge_id",
//	 "amount", "currency", "reason", "metadata"}
//
// amount in yen; a capture without one captures the whole authorisation,
// a cancel carries none. charge_id, if sent, must be the order's charge.
type opRequest struct {
	RefundID  string            `json:"refund_id"`
	CaptureID string            `json:"capture_id"`
	CancelID  string            `json:"cancel_id"`
	OrderID   string            `json:"order_id"`
	ChargeID  string            `json:"charge_id"`
	Amount    int64             `json:"amount"`
	Currency  string            `json:"currency"`
	Reason    string            `json:"reason"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

func (r opRequest) id(t opType) string {
	switch t {
	case opCapture:
		return r.CaptureID
	case opCancel:
		return r.CancelID
	}
	return r.RefundID
}

// parseOp decodes and validates an operation's body.
func parseOp(t opType, body []byte) (opRequest, *apiError) {
	var req opRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return req, bodyError(err)
	}
	switch {
	case strings.TrimSpace(req.id(t)) == "":
		return req, invalidParam(t.idField, t.idField+" is required")
	case strings.TrimSpace(req.OrderID) == "":
		return req, invalidParam("order_id", "order_id is required")
	case t == opCancel:
		return req, nil
	case req.Amount < 0 || (t == opRefund && req.Amount == 0):
		return req, invalidParam("amount", "amount must be a positive whole number of yen")
	case req.Currency != "JPY":
		return req, invalidParam("currency", "currency must be JPY")
	}
	return req, nil
}

// opIDOf extracts the operation's ID and order from a body that may be
// invalid, for the counters and fault scripts.
func opIDOf(t opType, body []byte) (opID, orderID string) {
	var probe opRequest
	if json.Unmarshal(body, &probe) != nil {
		return "", ""
	}
	return probe.id(t), probe.OrderID
}
