package omise

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

const chargesPath = "/charges"

// NewChargeRequest builds POST /charges. The key goes in Idempotency-Key
// although Omise does not document it: it costs nothing, and helps if
// Omise honours it; nothing in the adapter depends on it.
func (p Provider) NewChargeRequest(ctx context.Context, t idempay.Target, req idempay.ChargeRequest, key string) (*http.Request, error) {
	r, err := wire.NewFormPost(ctx, t.BaseURL.JoinPath(chargesPath).String(), chargeForm(t, req, key), key)
	if err != nil {
		return nil, err
	}
	p.authorize(r, t)
	return r, nil
}

// authorize sets what every request to Omise carries: Basic auth with the
// secret key as user and an empty password, and the API version.
func (p Provider) authorize(r *http.Request, t idempay.Target) {
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Omise-Version", p.version())
	if t.Credentials != "" {
		r.SetBasicAuth(t.Credentials.Reveal(), "")
	}
}

// chargeForm returns the form parameters of the charge req makes under
// key: amount, currency (lower case), the card token or card ID as card, a
// source as source, customer, return_uri, description,
// metadata[idempay_intent], metadata[idempay_key] (the attempt's key) and
// metadata[idempay_namespace] (t's namespace) with the caller's metadata,
// and every Extra parameter. url.Values encodes keys sorted, so every
// request of the attempt sends the same bytes.
func chargeForm(t idempay.Target, req idempay.ChargeRequest, key string) url.Values {
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(req.Amount, 10))
	f.Set("currency", strings.ToLower(req.Currency))
	if src := req.Source.Reveal(); strings.HasPrefix(src, sourcePrefix) {
		f.Set("source", src)
	} else if src != "" {
		f.Set("card", src)
	}
	wire.SetIf(f, "customer", req.Customer)
	wire.SetIf(f, "return_uri", req.ReturnURL)
	wire.SetIf(f, "description", req.Description)
	wire.SetTags(f, t, req.IntentID, key, req.Metadata)
	for k, v := range req.Extra {
		f.Set(k, v)
	}
	return f
}
