package twoc2p

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/idempay/idempay"
)

// MaintenancePath is where Payment Maintenance (Payment Action 2.0) is
// served. 2C2P serves it on other hosts than PGW v4.3 (see
// Provider.MaintenanceURL); by default the adapter sends it under
// Config.BaseURL, as idempaytest/twoc2ptest serves it.
const MaintenancePath = "/PaymentAction/2.0/action"

// ActionVersion is the version of Payment Maintenance's XML the adapter
// sends: "Current : 4.3" in 2C2P's refund parameter table, and the
// version of its sample request (testdata/upstream).
const ActionVersion = "4.3"

// The process types of Payment Maintenance the adapter sends.
const (
	processInquiry      = "I"  // the transaction's status
	processVoid         = "V"  // Client.Cancel
	processSettle       = "S"  // Client.Capture
	processRefund       = "R"  // Client.Refund
	processRefundStatus = "RS" // the refunds of an invoice
)

// actionRequest is a maintenance request's XML, its elements in the order
// of 2C2P's sample refund request. idempotencyID is 2C2P's: "a repeated
// request with the same idempotencyID will return the same response as the
// original request" (its refund parameter table).
type actionRequest struct {
	XMLName       xml.Name `xml:"PaymentProcessRequest"`
	Version       string   `xml:"version"`
	MerchantID    string   `xml:"merchantID"`
	ProcessType   string   `xml:"processType"`
	InvoiceNo     string   `xml:"invoiceNo"`
	ActionAmount  string   `xml:"actionAmount,omitempty"`
	IdempotencyID string   `xml:"idempotencyID,omitempty"`
}

// actionAnswer is a maintenance answer's XML, opened.
type actionAnswer struct {
	XMLName       xml.Name      `xml:"PaymentProcessResponse"`
	Version       string        `xml:"version"`
	TimeStamp     string        `xml:"timeStamp"`
	MerchantID    string        `xml:"merchantID"`
	RespCode      string        `xml:"respCode"`
	RespDesc      string        `xml:"respDesc"`
	ProcessType   string        `xml:"processType"`
	InvoiceNo     string        `xml:"invoiceNo"`
	Amount        string        `xml:"amount"`
	Status        string        `xml:"status"`
	ReferenceNo   string        `xml:"referenceNo"`
	IdempotencyID string        `xml:"idempotencyID"`
	Refunds       []refundEntry `xml:"refundList>refund"`

	// Sealed is true when the answer came encrypted to the merchant and
	// signed by 2C2P, and both verified. Only a sealed answer can say that
	// anything was done, or prove that something was not.
	Sealed bool `xml:"-"`
}

// refundEntry is one refund of a Refund Status answer.
type refundEntry struct {
	ReferenceNo   string `xml:"referenceNo"`
	Amount        string `xml:"amount"`
	Status        string `xml:"status"`
	IdempotencyID string `xml:"idempotencyID"`
}

// ErrMalformedAction: a Payment Maintenance answer is neither a sealed
// token nor a PaymentProcessResponse in plain XML.
var ErrMalformedAction = errors.New("twoc2p: malformed Payment Maintenance answer")

// readAction opens a maintenance answer: a compact JWS (sealed) or, for
// what 2C2P could not open itself, plain XML. Errors wrap
// ErrMaintenanceSignature, ErrMaintenanceDecrypt or ErrMalformedAction.
func readAction(body []byte, k MaintenanceKeys) (*actionAnswer, error) {
	body = bytes.TrimSpace(body)
	var a actionAnswer
	if len(body) > 0 && body[0] == '<' {
		if err := xml.Unmarshal(body, &a); err != nil {
			return nil, fmt.Errorf("%w: plain XML does not parse", ErrMalformedAction)
		}
		return &a, nil
	}
	if len(body) == 0 || bytes.ContainsAny(body, " \t\r\n<>{}\"") {
		return nil, fmt.Errorf("%w: neither XML nor a compact JWS", ErrMalformedAction)
	}
	plain, err := open(string(body), k)
	if err != nil {
		return nil, err
	}
	if err := xml.Unmarshal(plain, &a); err != nil {
		return nil, fmt.Errorf("%w: sealed XML does not parse", ErrMalformedAction)
	}
	a.Sealed = true
	return &a, nil
}

// maintenanceURL is where maintenance requests go for t.
func (p Provider) maintenanceURL(t idempay.Target) (string, error) {
	if p.MaintenanceURL == "" {
		return t.BaseURL.JoinPath(MaintenancePath).String(), nil
	}
	if err := checkMaintenanceURL(p.MaintenanceURL); err != nil {
		return "", err
	}
	return p.MaintenanceURL, nil
}

func checkMaintenanceURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("twoc2p: Provider.MaintenanceURL does not parse")
	case u.User != nil:
		return errors.New("twoc2p: Provider.MaintenanceURL must not carry credentials")
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return errors.New("twoc2p: Provider.MaintenanceURL needs an http or https scheme and a host")
	}
	return nil
}

// newAction builds the sealed POST of one maintenance request. key, when
// set, also travels in the header KeyHeader, for logs and correlation.
func (p Provider) newAction(ctx context.Context, t idempay.Target, req actionRequest, key string) (*http.Request, error) {
	if err := p.Maintenance.Check(); err != nil {
		return nil, err
	}
	target, err := p.maintenanceURL(t)
	if err != nil {
		return nil, err
	}
	req.Version, req.MerchantID = ActionVersion, p.MerchantID
	plain, err := xml.Marshal(req)
	if err != nil {
		return nil, err
	}
	token, err := seal(plain, p.Maintenance)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader([]byte(token)))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("Accept", "text/plain")
	if key != "" {
		r.Header.Set(KeyHeader, key)
	}
	return r, nil
}

// KeyHeader carries an operation's key in the clear besides the
// idempotencyID inside the sealed XML, which nothing on the path can read
// (2C2P documents no header; it ignores this one). It is deliberately not
// Idempotency-Key: net/http resends by itself a request carrying that
// header when a kept-alive connection dies under it, which for a provider
// that does not de-duplicate could refund twice.
const KeyHeader = "X-Idempay-Key"

// action is one maintenance lookup (I or RS) and its answer, read.
type action struct {
	status  int
	answer  *actionAnswer
	readErr error
	body    []byte
}

// inquireAction sends one maintenance lookup for invoiceNo and reads the
// answer. It returns an error only when no answer came back.
func (p Provider) inquireAction(ctx context.Context, hc *http.Client, t idempay.Target, processType, invoiceNo string) (action, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	r, err := p.newAction(ctx, t, actionRequest{InvoiceNo: invoiceNo, ProcessType: processType}, "")
	if err != nil {
		return action{}, err
	}
	resp, err := hc.Do(r)
	if err != nil {
		return action{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return action{}, err
	}
	a, rerr := readAction(body, p.Maintenance)
	return action{status: resp.StatusCode, answer: a, readErr: rerr, body: body}, nil
}
