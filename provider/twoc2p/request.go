package twoc2p

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"strings"

	"github.com/idempay/idempay"
)

// facts travels in the request's context from NewChargeRequest to
// ReadCharge, which the Provider interface gives only the response: the
// key to verify the answer with, and what the answer does not repeat.
type facts struct {
	signer    idempay.TwoC2PSigner
	invoiceNo string
	amount    int64
	currency  string
}

type factsKey struct{}

// String keeps the secret out of a printed context.
func (*facts) String() string { return "2c2p request" }

// NewChargeRequest builds the signed Payment Token request of req, with key
// as its idempotencyID and the invoiceNo of the attempt it is built for
// (idempay.AttemptOf). The body is the same JWT on every retry. An attempt
// whose invoiceNo does not fit 2C2P's limit is refused with a
// *idempay.ValidationError (field Attempt): nothing is sent.
func (p Provider) NewChargeRequest(ctx context.Context, t idempay.Target, req idempay.ChargeRequest, key string) (*http.Request, error) {
	pt, err := p.payload(req, idempay.AttemptOf(ctx), key)
	if err != nil {
		return nil, err
	}
	body, err := pt.Body(t.Credentials)
	if err != nil {
		return nil, err
	}
	f := &facts{signer: p.signer(t), invoiceNo: pt.InvoiceNo, amount: req.Amount, currency: strings.ToUpper(req.Currency)}
	return post(context.WithValue(ctx, factsKey{}, f), t, cmp.Or(p.TokenPath, TokenPath), body)
}

// post builds a signed JSON POST to path under t.
func post(ctx context.Context, t idempay.Target, path string, body []byte) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL.JoinPath(path).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	return r, nil
}
