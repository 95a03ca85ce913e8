package idempay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// OwnAPI speaks a merchant's own payment API. Its zero value speaks the
// contract of the article idempay grew from, widened to any currency:
//
//	POST /payments/charge
//	Idempotency-Key: <key>
//	{"order_id": "...", "amount": 1500, "currency": "JPY", "amount_jpy": 1500,
//	 "omise_token": "tokn_...", "metadata": {...}}
//
// amount is in the currency's minor units; amount_jpy, the article's own
// field, is sent for JPY only, so that a server reading it alone never takes
// cents for yen; metadata is left out when empty. The answer is 201
// {"order_id", "charge_id", "status", "amount_jpy"} (or "amount" and
// "currency"; without "currency" the charge is in the currency charged, and
// with amount_jpy alone in yen, never otherwise), with
// "Idempotency-Replayed: true" on replays, 409 while the key is in flight
// and 422 when the key was used with another body. Errors
// may come as {"error": {"type", "code", "decline_code", "param",
// "message"}} or as FastAPI's {"detail": ...}. Every field changes one part
// of the contract.
//
// The default body has no place for Description, Customer, ReturnURL or
// Extra: Validate refuses a request that sets one (a *ValidationError naming
// the field) rather than drop it in silence. Set Encode to send them. The
// one Extra it carries is {"capture": "false"}, sent as "capture": false:
// authorise now, capture later. An answer whose status is "authorized" (or
// "requires_capture") is an authorisation awaiting capture. Refunds,
// captures and cancels follow the same contract on their own paths (see
// NewRefundRequest).
type OwnAPI struct {
	// Path of the charge endpoint. Default "/payments/charge".
	Path string
	// KeyHeader carries the key. Default "Idempotency-Key".
	KeyHeader string
	// ReplayHeaders mark a replayed answer when "true". Default both
	// spellings in use: "Idempotency-Replayed" and "Idempotent-Replayed".
	ReplayHeaders []string
	// Encode builds the request body and its content type. Default: the
	// JSON above. With Encode set, Validate leaves the request to it.
	Encode func(req ChargeRequest) (body []byte, contentType string, err error)
	// LookupPath, if set, makes the adapter able to settle an intent
	// without resending: GET LookupPath?order_id=<intent>&idempotency_key=<key>
	// answers the charge made under that key (2xx), or 404 when there is
	// none. A server that ignores the key must answer only charges that
	// moved money, since a decline it answered could be an earlier
	// attempt's.
	LookupPath string

	// RefundPath, CapturePath and CancelPath are the endpoints of the
	// operations. Defaults "/payments/refund", "/payments/capture" and
	// "/payments/cancel".
	RefundPath, CapturePath, CancelPath string
	// OpLookup makes the adapter able to settle an operation without
	// resending: GET on its path with ?refund_id=, ?capture_id= or
	// ?cancel_id=, and &idempotency_key=<key>, answers the operation made
	// under that key as the POST did (2xx), or 404 when there is none.
	OpLookup bool
	// EncodeOp builds the body of a refund, capture or cancel and its
	// content type. Default: the JSON described at NewOpRequest.
	EncodeOp func(op OpRequest) (body []byte, contentType string, err error)
}

var (
	_ Provider      = OwnAPI{}
	_ Finder        = OwnAPI{}
	_ SecretFielder = OwnAPI{}
	_ Operator      = OwnAPI{}
)

// SecretFields lists the answer members never kept: client secrets, which
// payment APIs modelled on Stripe's return with a charge.
func (OwnAPI) SecretFields() []string { return []string{"client_secret"} }

// Name is "ownapi".
func (OwnAPI) Name() string { return "ownapi" }

// Validate refuses what the default encoding cannot carry: a request
// without a Source (omise_token), or one that sets a field the body has no
// place for.
func (a OwnAPI) Validate(req ChargeRequest) error {
	if a.Encode != nil {
		return nil
	}
	if req.Source == "" {
		return invalid("Source", "is required by the own-API contract (omise_token)")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"Description", req.Description != ""}, {"Customer", req.Customer != ""},
		{"ReturnURL", req.ReturnURL != ""}, {"Extra", otherExtra(req)}} {
		if f.set {
			return invalid(f.name, "has no place in the default own-API body; set OwnAPI.Encode to send it")
		}
	}
	if v, ok := req.Extra["capture"]; ok && v != "true" && v != "false" {
		return invalid("Extra", "capture must be true or false, got %q", v)
	}
	return nil
}

// NewChargeRequest builds one POST with the key header.
func (a OwnAPI) NewChargeRequest(ctx context.Context, t Target, req ChargeRequest, key string) (*http.Request, error) {
	encode := a.Encode
	if encode == nil {
		encode = encodeArticleBody
	}
	body, contentType, err := encode(req)
	if err != nil {
		return nil, err
	}
	// The answer may name no currency: ReadCharge takes the one charged
	// from the request it answers (resp.Request carries this context).
	ctx = context.WithValue(ctx, chargedCurrency{}, strings.ToUpper(req.Currency))
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL.JoinPath(cmp.Or(a.Path, "/payments/charge")).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// One array holds every header's value (Header.Set makes a slice each).
	vals := [4]string{contentType, "application/json", key}
	r.Header["Content-Type"] = vals[0:1:1]
	r.Header["Accept"] = vals[1:2:2]
	r.Header[textproto.CanonicalMIMEHeaderKey(cmp.Or(a.KeyHeader, "Idempotency-Key"))] = vals[2:3:3]
	if t.Credentials != "" {
		vals[3] = "Bearer " + t.Credentials.Reveal()
		r.Header["Authorization"] = vals[3:4:4]
	}
	return r, nil
}

// ownAPIBody is the default request body.
type ownAPIBody struct {
	OrderID   string            `json:"order_id"`
	Amount    int64             `json:"amount"`
	Currency  string            `json:"currency"`
	AmountJPY int64             `json:"amount_jpy,omitempty"`
	Token     string            `json:"omise_token"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Capture   *bool             `json:"capture,omitempty"`
}

// otherExtra reports whether req.Extra holds anything the default body
// cannot carry: anything but "capture".
func otherExtra(req ChargeRequest) bool {
	_, capture := req.Extra["capture"]
	return len(req.Extra) > 1 || (len(req.Extra) == 1 && !capture)
}

func encodeArticleBody(req ChargeRequest) ([]byte, string, error) {
	body := ownAPIBody{OrderID: req.IntentID, Amount: req.Amount, Currency: strings.ToUpper(req.Currency),
		Token: req.Source.Reveal(), Metadata: req.Metadata}
	if body.Currency == "JPY" {
		body.AmountJPY = req.Amount
	}
	if req.Extra["capture"] == "false" {
		body.Capture = new(bool) // authorise now, capture later
	}
	b, err := json.Marshal(body)
	return b, "application/json", err
}

// ReadCharge reads the own API's answer.
func (a OwnAPI) ReadCharge(resp *http.Response, body []byte) Verdict {
	v := Verdict{Kind: ClassifyStatus(resp.StatusCode), Replayed: a.replayed(resp.Header),
		RequestID: resp.Header.Get("Request-Id")}
	if v.Kind == KindSucceeded {
		return a.readSuccess(v, body, requestCurrency(resp))
	}
	v.Err = readOwnAPIError(body)
	v.Kind = refineOwnAPIKind(resp.StatusCode, v.Kind, v.Err, body)
	return v
}

func (a OwnAPI) replayed(h http.Header) bool {
	names := a.ReplayHeaders
	if names == nil {
		names = []string{"Idempotency-Replayed", "Idempotent-Replayed"}
	}
	for _, n := range names {
		if strings.EqualFold(strings.TrimSpace(h.Get(n)), "true") {
			return true
		}
	}
	return false
}

type ownAPICharge struct {
	OrderID   string `json:"order_id"`
	ChargeID  string `json:"charge_id"`
	Status    string `json:"status"`
	AmountJPY int64  `json:"amount_jpy"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// chargedCurrency keys, in a charge request's context, the currency it
// charges.
type chargedCurrency struct{}

// requestCurrency is the currency of the charge request resp answers, or
// "" when resp answers none of NewChargeRequest's (a lookup).
func requestCurrency(resp *http.Response) string {
	if resp == nil || resp.Request == nil {
		return ""
	}
	cur, _ := resp.Request.Context().Value(chargedCurrency{}).(string)
	return cur
}

// readSuccess reads a 2xx answer to a charge made in charged ("" when
// unknown, as for a lookup). The charge's currency is the answer's, else
// the one charged, else JPY only if the answer says yen (the article's
// amount_jpy alone): never invented, for a refund is sent in it. An answer
// that names none, or says yen for a charge in another currency, settles
// nothing.
func (a OwnAPI) readSuccess(v Verdict, body []byte, charged string) Verdict {
	var c ownAPICharge
	if err := json.Unmarshal(body, &c); err != nil || c.ChargeID == "" {
		// A 2xx we cannot read still means the server did something.
		return Verdict{Kind: KindUnknown, Replayed: v.Replayed, RequestID: v.RequestID}
	}
	ch := &Charge{ID: c.ChargeID, Status: c.Status, State: StateSucceeded, Amount: cmp.Or(c.Amount, c.AmountJPY)}
	switch strings.ToLower(c.Status) {
	case "failed", "declined":
		v.Kind = KindDeclined
		v.Err = &APIError{Code: "declined", Message: "charge " + c.ChargeID + " " + c.Status}
		return v
	case "pending", "processing", "requires_action":
		v.Kind, ch.State = KindPending, StatePending
	case "authorized", "requires_capture":
		ch.Authorized = true
	}
	currency, problem := answerCurrency(c, charged)
	if problem != "" {
		return Verdict{Kind: KindUnknown, Replayed: v.Replayed, RequestID: v.RequestID, Err: &APIError{Message: problem}}
	}
	ch.Currency = currency
	v.Charge = ch
	return v
}

// answerCurrency is the currency of a charge answered c, made in charged
// ("" when unknown), or why the answer cannot say.
func answerCurrency(c ownAPICharge, charged string) (currency, problem string) {
	if c.Currency != "" {
		return strings.ToUpper(c.Currency), ""
	}
	yenOnly := c.Amount == 0 && c.AmountJPY != 0 // the article's amount_jpy alone
	switch {
	case yenOnly && charged != "" && charged != "JPY":
		return "", "the answer's amount_jpy says yen for a charge in " + charged
	case yenOnly:
		return "JPY", ""
	case charged != "":
		return charged, ""
	}
	return "", "the answer names no currency"
}

type ownAPIErrorBody struct {
	Error *struct {
		Type        string `json:"type"`
		Code        string `json:"code"`
		DeclineCode string `json:"decline_code"`
		Param       string `json:"param"`
		Message     string `json:"message"`
	} `json:"error"`
	Detail json.RawMessage `json:"detail"`
}

func readOwnAPIError(body []byte) *APIError {
	var b ownAPIErrorBody
	if json.Unmarshal(body, &b) != nil {
		return &APIError{Message: snippet(body)}
	}
	if b.Error != nil {
		return &APIError{Type: b.Error.Type, Code: b.Error.Code, DeclineCode: b.Error.DeclineCode,
			Param: b.Error.Param, Message: b.Error.Message}
	}
	if len(b.Detail) > 0 {
		var s string
		if json.Unmarshal(b.Detail, &s) == nil {
			return &APIError{Message: s}
		}
		return &APIError{Type: "validation_error", Message: snippet(b.Detail)}
	}
	return &APIError{Message: snippet(body)}
}

// refineOwnAPIKind reads what the status alone cannot say. A 422 is the
// article's "key re-used with another body" unless the body shows a
// validation error (FastAPI's detail list): when in doubt, the outcome is
// unknown rather than failed.
func refineOwnAPIKind(status int, k Kind, e *APIError, body []byte) Kind {
	idem := strings.Contains(e.Type, "idempotency") || strings.Contains(e.Code, "idempotency")
	switch {
	case idem && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity):
		return KindKeyConflict
	case status == http.StatusUnprocessableEntity && e.Type != "validation_error" && e.Type != "invalid_request_error":
		return KindKeyConflict
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(e.Message), "idempotency-key"):
		// The server did not see our key: a configuration error, nothing done.
		return KindConfig
	}
	return k
}

// FindCharge looks the intent's charge up at LookupPath.
func (a OwnAPI) FindCharge(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error) {
	if a.LookupPath == "" {
		return Verdict{}, fmt.Errorf("%w: OwnAPI.LookupPath is not set", ErrNoLookup)
	}
	// The key names the attempt: after a declined card, the charge of the
	// next attempt must not be answered with the first one's decline.
	q := url.Values{"order_id": {rec.ID}, "idempotency_key": {rec.Key}}
	return a.lookup(ctx, hc, t, a.LookupPath, q, a.ReadCharge)
}

// lookup sends GET path?q and reads the answer with read, as a replay of
// what the server did; 404 is its proof that nothing was done.
func (a OwnAPI) lookup(ctx context.Context, hc *http.Client, t Target, path string, q url.Values,
	read func(*http.Response, []byte) Verdict) (Verdict, error) {
	u := t.BaseURL.JoinPath(path)
	u.RawQuery = q.Encode()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Verdict{}, err
	}
	a.authorize(r, t)
	resp, err := hc.Do(r)
	if err != nil {
		return Verdict{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Verdict{}, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return Verdict{Kind: KindNotFound}, nil
	}
	v := read(resp, body)
	v.Replayed = true
	if v.Err != nil && v.Err.Status == 0 {
		v.Err.Status = resp.StatusCode // the lookup's answer, as a fresh one would carry
	}
	return v, nil
}

// snippet quotes the start of a body for an error message.
func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}
