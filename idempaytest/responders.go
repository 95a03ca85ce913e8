package idempaytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jarcoal/httpmock"
)

// ReplayHeader is the header ReplayResponder sets to "true", the
// contract's default spelling (idempay.OwnAPI reads it and Stripe's
// "Idempotent-Replayed").
const ReplayHeader = "Idempotency-Replayed"

// ErrDropped is the transport error DropResponder returns, and so is in
// the chain of the *url.Error the http.Client returns for a dropped
// answer. It matches io.EOF too, as a connection closed under a real
// request does.
var ErrDropped = fmt.Errorf("idempaytest: connection closed before the answer: %w", io.EOF)

// chargeBody is the success body of the contract.
type chargeBody struct {
	OrderID   string `json:"order_id"`
	ChargeID  string `json:"charge_id"`
	Status    string `json:"status"`
	AmountJPY int64  `json:"amount_jpy"`
}

// ChargeResponder answers 201 Created with the contract's body:
// chargeID, status "succeeded", and the order_id and amount_jpy of the
// request (zero values if its body is not the contract's JSON). It echoes
// the request's Idempotency-Key, as the reference server does.
func ChargeResponder(chargeID string) httpmock.Responder {
	return chargeResponder(http.StatusCreated, chargeID, "succeeded")
}

// PendingResponder answers 202 Accepted with the contract's body, status
// "pending": the provider accepted the charge and finishes it later (3-D
// Secure, a hosted page). The idempay client returns the pending charge
// and an error matching idempay.ErrPending, outcome pending, and keeps the
// intent open; a later Charge of the intent is answered by looking the
// charge up (OwnAPI.LookupPath) or, if that cannot tell, as pending from
// the store. Otherwise it answers as ChargeResponder does.
func PendingResponder(chargeID string) httpmock.Responder {
	return chargeResponder(http.StatusAccepted, chargeID, "pending")
}

func chargeResponder(status int, chargeID, chargeStatus string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		var in struct {
			OrderID   string `json:"order_id"`
			AmountJPY int64  `json:"amount_jpy"`
		}
		if body, err := readAll(req); err == nil {
			_ = json.Unmarshal(body, &in) // an unreadable body just echoes nothing
		}
		resp := jsonResponse(req, status, chargeBody{OrderID: in.OrderID, ChargeID: chargeID,
			Status: chargeStatus, AmountJPY: in.AmountJPY})
		if key := req.Header.Get("Idempotency-Key"); key != "" {
			resp.Header.Set("Idempotency-Key", key)
		}
		return resp, nil
	}
}

// ReplayResponder answers as ChargeResponder does, marked with
// ReplayHeader: the provider's stored answer to an earlier request with
// the key. The idempay client reports the charge Replayed, ReplayedFrom
// idempay.ReplayFromServer.
func ReplayResponder(chargeID string) httpmock.Responder {
	return ChargeResponder(chargeID).HeaderSet(http.Header{ReplayHeader: {"true"}})
}

// DeclineResponder answers 402 with a card_error card_declined carrying
// declineCode (for example "insufficient_funds"). The idempay client
// returns an error matching idempay.ErrDeclined, outcome failed, with the
// code in its *idempay.APIError.
func DeclineResponder(declineCode string) httpmock.Responder {
	return errorResponder(http.StatusPaymentRequired, apiErrorBody{Type: "card_error", Code: "card_declined",
		DeclineCode: declineCode, Message: "the card was declined"})
}

// InFlightResponder answers 409 idempotency_key_in_use: another request
// with the key is still running. The idempay client retries it; if every
// attempt gets it, the charge ends with idempay.ErrInProgress, outcome
// unknown.
func InFlightResponder() httpmock.Responder {
	return errorResponder(http.StatusConflict, apiErrorBody{Type: "conflict", Code: "idempotency_key_in_use",
		Message: "a request with this key is in progress; retry later"})
}

// KeyReusedResponder answers 422 idempotency_key_reused: the key was
// used with another body. The idempay client does not retry it and
// returns idempay.ErrKeyConflict, outcome unknown, since something was
// done under the key.
func KeyReusedResponder() httpmock.Responder {
	return errorResponder(http.StatusUnprocessableEntity, apiErrorBody{Type: "idempotency_error",
		Code: "idempotency_key_reused", Message: "this key was already used with a different request"})
}

// UnavailableResponder answers 503 service_unavailable with a
// Retry-After of retryAfter in whole seconds, rounded up. The idempay
// client retries it, waiting at most its RetryPolicy.MaxRetryAfter. It
// panics if retryAfter is negative.
func UnavailableResponder(retryAfter time.Duration) httpmock.Responder {
	if retryAfter < 0 {
		panic("idempaytest: UnavailableResponder: negative Retry-After")
	}
	secs := (retryAfter + time.Second - 1) / time.Second
	return errorResponder(http.StatusServiceUnavailable, apiErrorBody{Type: "api_error",
		Code: "service_unavailable", Message: "try again later"}).
		HeaderSet(http.Header{"Retry-After": {strconv.FormatInt(int64(secs), 10)}})
}

// DropResponder simulates a lost answer: the request is "sent" (its body
// read, the httptrace hooks for written headers and request called) and
// then the call fails with ErrDropped. The idempay client treats it as a
// request that may have charged: it retries with the same key, and if no
// attempt is answered the outcome is unknown.
//
// The hooks matter: a mock transport writes nothing, and the idempay
// client learns that a request may have reached the provider from
// httptrace's WroteHeaders. An error from httpmock.NewErrorResponder
// fires no hook, so it simulates a connection that was never made
// (outcome failed, idempay.ErrUnreachable).
func DropResponder() httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		_, _ = readAll(req)
		arrived(req)
		return nil, ErrDropped
	}
}

// apiErrorBody is the object under "error" in the contract's error bodies.
type apiErrorBody struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Param       string `json:"param,omitempty"`
	Message     string `json:"message,omitempty"`
}

func errorResponder(status int, e apiErrorBody) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		_, _ = readAll(req)
		return jsonResponse(req, status, struct {
			Error apiErrorBody `json:"error"`
		}{e}), nil
	}
}

// jsonResponse builds a complete response to req, as a real transport
// would hand it to the client.
func jsonResponse(req *http.Request, status int, v any) *http.Response {
	b, err := json.Marshal(v)
	if err != nil { // unreachable: strings and ints only
		panic("idempaytest: " + err.Error())
	}
	resp := httpmock.NewBytesResponse(status, b)
	resp.Header.Set("Content-Type", "application/json")
	resp.ContentLength = int64(len(b))
	resp.Request = req
	return resp
}

// readAll consumes the request body as the wire would.
func readAll(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, errors.New("no body")
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}
