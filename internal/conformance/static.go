package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/idempay/idempay"
)

// capability is an adapter's Operator for one type of operation.
type capability struct {
	t     idempay.OpType
	op    idempay.Operator
	finds bool
}

// capabilityOf is p's Operator for t, if p makes operations of type t.
func capabilityOf(p idempay.Provider, t idempay.OpType) (capability, bool) {
	o, ok := p.(idempay.Operator)
	if !ok {
		return capability{}, false
	}
	makes, finds := o.Operates(t)
	return capability{t: t, op: o, finds: finds}, makes
}

// sample is a valid operation of c's type, as the Client completes it.
func sample(c capability, s Subject) idempay.OpRequest {
	return idempay.OpRequest{Type: c.t, ID: "cf-op-1", IntentID: "cf-intent", ChargeRef: "cf-charge-ref",
		Amount: max(s.Amount/2, 1), Currency: s.Currency}
}

func target(raw string, cred idempay.Secret) idempay.Target {
	u, _ := url.Parse(raw)
	return idempay.Target{BaseURL: u, Credentials: cred, Namespace: "conformance:default"}
}

// requestRules: a valid operation is accepted by the adapter's Validate;
// its request goes under the BaseURL, carries the key (in a header or the
// body), keeps the credentials out of the URL, and is built alike twice
// (the Client sends it as built on every retry).
func requestRules(c capability) func(Subject) error {
	return func(s Subject) error {
		op := sample(c, s)
		if err := c.op.ValidateOp(op); err != nil {
			return fmt.Errorf("Validate refused a valid %s: %v", c.t, err)
		}
		const key = "cf-key-0123456789"
		t := target("https://provider.test/base", "sk_conformance_secret")
		r1, b1, err := built(c, t, op, key)
		if err != nil {
			return err
		}
		_, b2, err := built(c, t, op, key)
		var errs []error
		switch {
		case err != nil:
			errs = append(errs, err)
		case !bytes.Equal(b1, b2):
			errs = append(errs, errors.New("two builds of one operation differ"))
		}
		if r1.URL.Host != "provider.test" || !strings.HasPrefix(r1.URL.Path, "/base") {
			errs = append(errs, fmt.Errorf("request to %s, not under the BaseURL", r1.URL))
		}
		if !carries(r1, b1, key) {
			errs = append(errs, errors.New("the request does not carry its key"))
		}
		if strings.Contains(r1.URL.String(), "sk_conformance_secret") {
			errs = append(errs, errors.New("the credentials are in the URL"))
		}
		return errors.Join(errs...)
	}
}

func built(c capability, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, []byte, error) {
	r, err := c.op.NewOpRequest(context.Background(), t, op, key)
	if err != nil {
		return nil, nil, fmt.Errorf("could not build a valid %s: %v", c.t, err)
	}
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	return r, body, nil
}

func carries(r *http.Request, body []byte, key string) bool {
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, key) {
				return true
			}
		}
	}
	return bytes.Contains(body, []byte(key)) || strings.Contains(r.URL.RawQuery, key)
}

// hostileRules: an answer that proves nothing (a 5xx, a body that is not
// the provider's, an empty 2xx) is never read as a definite refusal
// (KindDeclined would free the money the operation may have moved), nor
// as a success without the operation.
func hostileRules(c capability) func(Subject) error {
	return func(Subject) error {
		var errs []error
		for _, a := range []struct {
			status int
			body   string
		}{{500, `{}`}, {502, `<html>bad gateway</html>`}, {503, ``}, {200, `<html>ok</html>`}, {201, ``}, {200, `[1,2]`}} {
			resp := &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(a.body))}
			v := c.op.ReadOp(c.t, resp, []byte(a.body))
			switch {
			case v.Kind == idempay.KindDeclined:
				errs = append(errs, fmt.Errorf("HTTP %d %q read as a definite refusal", a.status, a.body))
			case (v.Kind == idempay.KindSucceeded || v.Kind == idempay.KindPending) && v.Operation == nil && v.Charge == nil:
				errs = append(errs, fmt.Errorf("HTTP %d %q read as %s without the operation", a.status, a.body, v.Kind))
			}
		}
		return errors.Join(errs...)
	}
}

// findRules: a lookup that gets no proof (every answer a 500) never says
// KindNotFound (which lets a LookupBeforeResender provider resend) nor a refusal.
func findRules(c capability) func(Subject) error {
	return func(s Subject) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}))
		defer srv.Close()
		op := sample(c, s)
		v, err := c.op.FindOp(context.Background(), srv.Client(), target(srv.URL, ""), op,
			idempay.Record{Namespace: "conformance:default/" + string(c.t), ID: op.ID, Attempt: 1, Key: "cf-key"})
		if err == nil && (v.Kind == idempay.KindNotFound || v.Kind == idempay.KindDeclined) {
			return fmt.Errorf("a lookup answered only by 500s said %s", v.Kind)
		}
		return nil
	}
}
