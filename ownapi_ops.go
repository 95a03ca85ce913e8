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

// Operates reports that the own API makes refunds, captures and cancels,
// and looks them up if OpLookup.
func (a OwnAPI) Operates(OpType) (makes, finds bool) { return true, a.OpLookup }

// ValidateOp accepts every valid operation: the own API's contract takes
// any currency in minor units.
func (OwnAPI) ValidateOp(OpRequest) error { return nil }

// NewOpRequest builds one POST of the operation's path (RefundPath,
// CapturePath, CancelPath) with the key header and, by default, the JSON
// body
//
//	{"<type>_id", "order_id", "charge_id", "amount", "currency", "reason", "metadata"}
//
// ("refund_id", "capture_id" or "cancel_id"; amounts in minor units, and
// none for a cancel; reason and metadata only when set), answered 2xx
// {"id", "status", "amount", "currency"}. A refund's status is
// "succeeded", or "pending" / "processing" for one not finished yet, or
// "failed" / "canceled" for one the server refused for good; a capture's
// "captured" or "succeeded"; a cancel's "canceled" (or "cancelled",
// "voided", "reversed", "succeeded"). Errors, replays, 409 and 422 read
// as for charges.
func (a OwnAPI) NewOpRequest(ctx context.Context, t Target, op OpRequest, key string) (*http.Request, error) {
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

// ReadOp reads the answer to an operation of type t.
func (a OwnAPI) ReadOp(t OpType, resp *http.Response, body []byte) Verdict {
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

// FindOp looks the operation up by GET of its path with <type>_id and
// idempotency_key (the attempt's key, so that a server answers only what
// was done under it), if OpLookup.
func (a OwnAPI) FindOp(ctx context.Context, hc *http.Client, t Target, op OpRequest, rec Record) (Verdict, error) {
	if !a.OpLookup {
		return Verdict{}, fmt.Errorf("%w: OwnAPI.OpLookup is not set", ErrNoLookup)
	}
	q := url.Values{opIDField(op.Type): {op.ID}, "idempotency_key": {rec.Key}}
	return a.lookup(ctx, hc, t, a.opPath(op.Type), q,
		func(resp *http.Response, body []byte) Verdict { return a.ReadOp(op.Type, resp, body) })
}
