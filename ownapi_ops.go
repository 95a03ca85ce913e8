package idempay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Default paths of the own API's operations.
const (
	DefaultRefundPath  = "/payments/refund"
	DefaultCapturePath = "/payments/capture"
	DefaultCancelPath  = "/payments/cancel"
)

// ValidateRefund accepts every valid refund: the own API's contract takes
// any currency in minor units.
func (OwnAPI) ValidateRefund(OpRequest) error { return nil }

// ValidateCapture accepts every valid capture.
func (OwnAPI) ValidateCapture(OpRequest) error { return nil }

// ValidateCancel accepts every valid cancel.
func (OwnAPI) ValidateCancel(OpRequest) error { return nil }

// NewRefundRequest builds one POST RefundPath with the key header and, by
// default, the JSON body
//
//	{"refund_id", "order_id", "charge_id", "amount", "currency", "reason", "metadata"}
//
// (amounts in minor units; reason and metadata only when set), answered
// 2xx {"id", "status", "amount", "currency"}: status "succeeded", or
// "pending" / "processing" for a refund not finished yet, or "failed" /
// "canceled" for one the server refused for good. Errors, replays, 409 and
// 422 read as for charges.
func (a OwnAPI) NewRefundRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error) {
	return a.newOpRequest(ctx, t, op, key)
}

// NewCaptureRequest builds one POST CapturePath, as NewRefundRequest does,
// with "capture_id"; a succeeded answer's status is "captured" or
// "succeeded".
func (a OwnAPI) NewCaptureRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error) {
	return a.newOpRequest(ctx, t, op, key)
}

// NewCancelRequest builds one POST CancelPath, as NewRefundRequest does,
// with "cancel_id" and no amount; a succeeded answer's status is
// "canceled" (or "cancelled", "voided", "reversed", "succeeded").
func (a OwnAPI) NewCancelRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error) {
	return a.newOpRequest(ctx, t, op, key)
}

// ReadRefund reads the answer to a refund.
func (a OwnAPI) ReadRefund(resp *http.Response, body []byte) Verdict {
	return a.readOp(OpRefund, resp, body)
}

// ReadCapture reads the answer to a capture.
func (a OwnAPI) ReadCapture(resp *http.Response, body []byte) Verdict {
	return a.readOp(OpCapture, resp, body)
}

// ReadCancel reads the answer to a cancel.
func (a OwnAPI) ReadCancel(resp *http.Response, body []byte) Verdict {
	return a.readOp(OpCancel, resp, body)
}

// FindRefund looks the refund up by GET RefundPath?refund_id=&idempotency_key=
// (the attempt's key, so that a server answers only what was done under
// it), if OpLookup.
func (a OwnAPI) FindRefund(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error) {
	return a.findOp(ctx, hc, t, op, rec)
}

// FindCapture looks the capture up by GET CapturePath?capture_id=, if
// OpLookup.
func (a OwnAPI) FindCapture(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error) {
	return a.findOp(ctx, hc, t, op, rec)
}

// FindCancel looks the cancel up by GET CancelPath?cancel_id=, if OpLookup.
func (a OwnAPI) FindCancel(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error) {
	return a.findOp(ctx, hc, t, op, rec)
}

func (a OwnAPI) opPath(t OpType) string {
	switch t {
	case OpCapture:
		return cmp.Or(a.CapturePath, DefaultCapturePath)
	case OpCancel:
		return cmp.Or(a.CancelPath, DefaultCancelPath)
	}
	return cmp.Or(a.RefundPath, DefaultRefundPath)
}

// opIDField is the body member, and lookup parameter, naming the operation.
func opIDField(t OpType) string { return string(t) + "_id" }

func (a OwnAPI) newOpRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error) {
	encode := a.EncodeOp
	if encode == nil {
		encode = encodeOpBody
	}
	body, contentType, err := encode(op)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL.JoinPath(a.opPath(op.Type)).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", contentType)
	r.Header.Set("Accept", "application/json")
	r.Header.Set(cmp.Or(a.KeyHeader, "Idempotency-Key"), key)
	a.authorize(r, t)
	return r, nil
}

func (OwnAPI) authorize(r *http.Request, t Target) {
	if t.Credentials != "" {
		r.Header.Set("Authorization", "Bearer "+t.Credentials.Reveal())
	}
}

func encodeOpBody(op OpRequest) ([]byte, string, error) {
	m := map[string]any{opIDField(op.Type): op.ID, "order_id": op.IntentID, "charge_id": op.ChargeRef}
	if op.Type != OpCancel {
		m["amount"], m["currency"] = op.Amount, op.Currency
	}
	if op.Reason != "" {
		m["reason"] = op.Reason
	}
	if len(op.Metadata) > 0 {
		m["metadata"] = op.Metadata
	}
	b, err := json.Marshal(m)
	return b, "application/json", err
}

type ownAPIOp struct {
	ID       string `json:"id"`
	ChargeID string `json:"charge_id"`
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

func (a OwnAPI) readOp(t OpType, resp *http.Response, body []byte) Verdict {
	v := Verdict{Kind: ClassifyStatus(resp.StatusCode), Replayed: a.replayed(resp.Header),
		RequestID: resp.Header.Get("Request-Id")}
	if v.Kind != KindSucceeded {
		v.Err = readOwnAPIError(body)
		v.Kind = refineOwnAPIKind(resp.StatusCode, v.Kind, v.Err, body)
		return v
	}
	var o ownAPIOp
	if err := json.Unmarshal(body, &o); err != nil || cmp.Or(o.ID, o.ChargeID) == "" {
		// A 2xx we cannot read still means the server did something.
		return Verdict{Kind: KindUnknown, Replayed: v.Replayed, RequestID: v.RequestID}
	}
	res := &Operation{ID: cmp.Or(o.ID, o.ChargeID), Status: o.Status, State: StateSucceeded, Amount: o.Amount,
		Currency: strings.ToUpper(o.Currency)}
	switch opStatusKind(t, strings.ToLower(o.Status)) {
	case KindPending:
		v.Kind, res.State = KindPending, StatePending
	case KindDeclined:
		v.Kind = KindDeclined
		v.Err = &APIError{Code: "declined", Message: fmt.Sprintf("%s %s %s", t, res.ID, o.Status)}
		return v
	case KindUnknown:
		return Verdict{Kind: KindUnknown, Replayed: v.Replayed, RequestID: v.RequestID}
	}
	v.Operation = res
	return v
}

// opStatusKind reads an operation's status word. A word it does not know
// says nothing for sure: unknown.
func opStatusKind(t OpType, status string) Kind {
	switch status {
	case "", "succeeded", "successful":
		return KindSucceeded
	case "pending", "processing", "requires_action":
		return KindPending
	case "failed", "declined":
		return KindDeclined
	}
	switch {
	case t == OpRefund && (status == "canceled" || status == "cancelled"):
		return KindDeclined // a refund cancelled before it was paid out
	case t == OpCapture && status == "captured":
		return KindSucceeded
	case t == OpCancel && slices.Contains([]string{"canceled", "cancelled", "voided", "reversed"}, status):
		return KindSucceeded
	}
	return KindUnknown
}

func (a OwnAPI) findOp(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error) {
	if !a.OpLookup {
		return Verdict{}, fmt.Errorf("%w: OwnAPI.OpLookup is not set", ErrNoLookup)
	}
	q := url.Values{opIDField(op.Type): {op.ID}, "idempotency_key": {rec.Key}}
	return a.lookup(ctx, hc, t, a.opPath(op.Type), q,
		func(resp *http.Response, body []byte) Verdict { return a.readOp(op.Type, resp, body) })
}
