package idempaytest

import (
	"cmp"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"syscall"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
)

// fakeProvider is the own-API adapter the FakeCharger's client speaks
// through: OwnAPI, named "fake", whose Validate spends a scripted Invalid
// step and whose answers carry a pending charge's AuthorizeURL.
type fakeProvider struct {
	idempay.OwnAPI
	f *FakeCharger
}

// Name is "fake": the provider of the fake's errors and namespace.
func (fakeProvider) Name() string { return "fake" }

// Validate refuses the request when the intent's next step is Invalid,
// as an adapter refuses input it cannot send.
func (p fakeProvider) Validate(req idempay.ChargeRequest) error {
	if field, ok := p.f.popInvalid(req.IntentID); ok {
		return &idempay.ValidationError{Field: field, Reason: "refused (scripted)"}
	}
	return p.OwnAPI.Validate(req)
}

// ReadCharge reads the answer as OwnAPI does, and the AuthorizeURL the
// contract has no field for.
func (p fakeProvider) ReadCharge(resp *http.Response, body []byte) idempay.Verdict {
	v := p.OwnAPI.ReadCharge(resp, body)
	if v.Charge != nil {
		var c wireCharge
		_ = json.Unmarshal(body, &c) // OwnAPI has read it: it is JSON
		v.Charge.AuthorizeURL = c.AuthorizeURL
	}
	return v
}

// wireBody is what the fake's client sends: what its answers echo.
type wireBody struct {
	OrderID  string `json:"order_id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

func encodeFakeBody(req idempay.ChargeRequest) ([]byte, string, error) {
	b, err := json.Marshal(wireBody{OrderID: req.IntentID, Amount: req.Amount, Currency: strings.ToUpper(req.Currency)})
	return b, "application/json", err
}

// wireCharge is a charge as the fake provider answers it.
type wireCharge struct {
	OrderID      string `json:"order_id"`
	ChargeID     string `json:"charge_id"`
	Status       string `json:"status"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	AuthorizeURL string `json:"authorize_url,omitempty"`
}

// fakeWire is the in-process provider: each request is answered by the
// intent's next step. A charge is a POST with the intent in its body; a
// lookup (of a pending charge) a GET with it in order_id.
type fakeWire struct{ f *FakeCharger }

func (w fakeWire) RoundTrip(req *http.Request) (*http.Response, error) {
	lookup := req.Method == http.MethodGet
	var in wireBody
	key := req.Header.Get("Idempotency-Key")
	if lookup {
		in.OrderID, key = req.URL.Query().Get("order_id"), req.URL.Query().Get("idempotency_key")
	} else if b, err := readAll(req); err == nil {
		_ = json.Unmarshal(b, &in) // our own encoding
	}
	gate, s, scripted := w.f.popSend(in.OrderID, Sent{Key: key, Lookup: lookup})
	if s.kind == stepUnreachable && scripted {
		// No connection: no hook fires, so the client knows nothing arrived.
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	arrived(req)
	if gate != nil {
		select {
		case <-gate:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	if lookup {
		return w.f.lookedUp(req, in.OrderID, s, scripted), nil
	}
	if !scripted || (s.kind == stepFault && s.fault == fakes.None) {
		s = step{kind: stepSucceed}
	}
	return w.f.charged(req, in, key, s)
}

// arrived fires the hooks a real transport fires once the request is
// written: from them the client knows the provider may have acted.
func arrived(req *http.Request) {
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil {
		if trace.WroteHeaders != nil {
			trace.WroteHeaders()
		}
		if trace.WroteRequest != nil {
			trace.WroteRequest(httptrace.WroteRequestInfo{})
		}
	}
}

// charged answers a charge request under key with step s; a key the
// provider charged under before is answered with that charge, replayed.
func (f *FakeCharger) charged(req *http.Request, in wireBody, key string, s step) (*http.Response, error) {
	f.mu.Lock()
	done, replay := f.byKey[key]
	f.mu.Unlock()
	if replay {
		resp := jsonResponse(req, http.StatusCreated, done)
		resp.Header.Set(ReplayHeader, "true")
		return resp, nil
	}
	switch s.kind {
	case stepFault:
		return f.faulted(req, in, key, s.fault)
	case stepDecline:
		return DeclineResponder(s.code)(req)
	case stepReject:
		return errorResponder(http.StatusBadRequest, apiErrorBody{Type: "invalid_request_error",
			Code: "parameter_invalid", Param: s.field, Message: s.field + " is invalid (scripted)"})(req)
	case stepUnknown:
		return nil, ErrDropped
	case stepInProgress:
		return InFlightResponder()(req)
	}
	var ch idempay.Charge
	if s.charge != nil {
		ch = *s.charge
	}
	c := wireCharge{OrderID: in.OrderID, ChargeID: cmp.Or(ch.ID, FakeChargeID(in.OrderID)),
		Status: cmp.Or(ch.Status, "succeeded"), Amount: cmp.Or(ch.Amount, in.Amount),
		Currency: cmp.Or(strings.ToUpper(ch.Currency), in.Currency), AuthorizeURL: ch.AuthorizeURL}
	status := http.StatusCreated
	if s.kind == stepPending {
		c.Status, status = cmp.Or(ch.Status, "pending"), http.StatusAccepted
		f.mu.Lock()
		if f.pending == nil {
			f.pending = map[string]wireCharge{}
		}
		f.pending[in.OrderID] = c
		f.mu.Unlock()
	}
	resp := jsonResponse(req, status, c)
	if ch.RequestID != "" {
		resp.Header.Set("Request-Id", ch.RequestID)
	}
	if ch.Replayed && ch.ReplayedFrom == idempay.ReplayFromServer {
		resp.Header.Set(ReplayHeader, "true")
	}
	return resp, nil
}

// faulted answers a charge request as a server struck by fault does.
func (f *FakeCharger) faulted(req *http.Request, in wireBody, key string, fault Fault) (*http.Response, error) {
	switch fault {
	case fakes.Unavailable:
		return errorResponder(http.StatusServiceUnavailable, apiErrorBody{Type: "api_error",
			Code: "service_unavailable", Message: "try again later"})(req)
	case fakes.Internal:
		return errorResponder(http.StatusInternalServerError, apiErrorBody{Type: "api_error",
			Code: "internal_error", Message: "the request failed on the server"})(req)
	case fakes.Post:
		f.mu.Lock()
		if f.byKey == nil {
			f.byKey = map[string]wireCharge{}
		}
		f.byKey[key] = wireCharge{OrderID: in.OrderID, ChargeID: FakeChargeID(in.OrderID), Status: "succeeded",
			Amount: in.Amount, Currency: in.Currency}
		f.mu.Unlock()
	}
	return nil, ErrDropped // Pre, Mid, Post: the connection closes before the answer
}

// lookedUp answers a lookup of the intent's pending charge: settled by a
// scripted CompletePending or FailPending, else still pending.
func (f *FakeCharger) lookedUp(req *http.Request, intentID string, s step, scripted bool) *http.Response {
	f.mu.Lock()
	c, ok := f.pending[intentID]
	if scripted {
		delete(f.pending, intentID)
	}
	f.mu.Unlock()
	switch {
	case !ok:
		return jsonResponse(req, http.StatusNotFound, struct{}{})
	case scripted && s.kind == stepFailPending:
		resp, _ := DeclineResponder(s.code)(req)
		return resp
	case scripted:
		c.Status, c.AuthorizeURL = "succeeded", ""
		return jsonResponse(req, http.StatusOK, c)
	}
	return jsonResponse(req, http.StatusAccepted, c)
}
