package stripe

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// paymentIntentsPath is the collection every request of the adapter uses.
const paymentIntentsPath = "/v1/payment_intents"

// NewChargeRequest builds POST /v1/payment_intents with the key in the
// Idempotency-Key header. url.Values encodes its keys sorted, so the body
// is the same bytes on every retry and every restart, as Stripe's
// parameter comparison under one key requires.
func (p Provider) NewChargeRequest(ctx context.Context, t idempay.Target, req idempay.ChargeRequest, key string) (*http.Request, error) {
	form, err := chargeForm(t, req, key)
	if err != nil {
		return nil, err
	}
	r, err := wire.NewFormPost(ctx, t.BaseURL.JoinPath(paymentIntentsPath).String(), form, key)
	if err != nil {
		return nil, err
	}
	p.authorize(r, t, req.IntentID)
	return r, nil
}

// authorize sets what every request to Stripe carries, for intentID's
// charge or its operations: the secret key, the API version, and the
// connected account it acts on, if any (Stripe-Account).
func (p Provider) authorize(r *http.Request, t idempay.Target, intentID string) {
	r.Header.Set("Accept", "application/json")
	if t.Credentials != "" {
		r.Header.Set("Authorization", "Bearer "+t.Credentials.Reveal())
	}
	if p.APIVersion != "" {
		r.Header.Set("Stripe-Version", p.APIVersion)
	}
	if acct := p.accountOf(intentID); acct != "" {
		r.Header.Set(AccountHeader, acct)
	}
}

// chargeForm returns the form parameters of the PaymentIntent that req creates
// under key: amount (in Stripe's units), currency (lower case),
// metadata[idempay_intent], metadata[idempay_key] (the attempt's key) and
// metadata[idempay_namespace] (t's namespace) with the caller's metadata,
// customer, description, and every Extra parameter. With a Source it also sets payment_method, confirm=true,
// metadata[idempay_confirm]=true, and return_url if given; without a
// ReturnURL and without payment method settings in Extra it adds
// automatic_payment_methods[enabled]=true and
// automatic_payment_methods[allow_redirects]=never, because Stripe refuses
// to confirm with redirect-capable methods enabled (its default) and
// nowhere to return to. Without a Source the PaymentIntent is created
// unconfirmed, for the customer to confirm on the client side.
func chargeForm(t idempay.Target, req idempay.ChargeRequest, key string) (url.Values, error) {
	amount, err := toStripe(req.Currency, req.Amount)
	if err != nil {
		return nil, err
	}
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(amount, 10))
	f.Set("currency", strings.ToLower(req.Currency))
	wire.SetTags(f, t, req.IntentID, key, req.Metadata)
	wire.SetIf(f, "customer", req.Customer)
	wire.SetIf(f, "description", req.Description)
	for k, v := range req.Extra {
		f.Set(k, v)
	}
	if req.Source == "" {
		return f, nil
	}
	f.Set("payment_method", req.Source.Reveal())
	f.Set("confirm", "true")
	f.Set("metadata["+ConfirmMetadataKey+"]", "true")
	wire.SetIf(f, "return_url", req.ReturnURL)
	if req.ReturnURL == "" && !choosesMethods(req.Extra) {
		f.Set("automatic_payment_methods[enabled]", "true")
		f.Set("automatic_payment_methods[allow_redirects]", "never")
	}
	return f, nil
}

// choosesMethods reports whether Extra already says which payment methods
// the intent accepts.
func choosesMethods(extra map[string]string) bool {
	for k := range extra {
		if strings.HasPrefix(k, "automatic_payment_methods[") || strings.HasPrefix(k, "payment_method_types[") {
			return true
		}
	}
	return false
}
