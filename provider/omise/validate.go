package omise

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Keys of ChargeRequest.Extra the adapter knows and checks. Any other
// charge parameter may be passed too, with its form name, except those the
// adapter sets itself.
const (
	// ExtraCapture is "true" (default) or "false" (authorise now, capture
	// later: the charge is then an authorisation, answered pending with
	// idempay.ErrAuthorized until Client.Capture captures it).
	ExtraCapture = "capture"
	// ExtraIP is the customer's IP address, for fraud checks.
	ExtraIP = "ip"
	// ExtraExpiresAt bounds how long a pending charge waits (ISO 8601).
	ExtraExpiresAt = "expires_at"
)

// ownParams are set from the request's own fields.
var ownParams = map[string]bool{"amount": true, "currency": true, "card": true, "source": true,
	"customer": true, "return_uri": true, "description": true, "metadata": true}

var formName = regexp.MustCompile(`^[a-z_]+(\[[a-z0-9_]*\])*$`)

// Source kinds, by ID prefix.
const (
	tokenPrefix  = "tokn_" // one-time card token: card=
	cardPrefix   = "card_" // saved card of a customer: card= with customer=
	sourcePrefix = "src_"  // payment source (offsite, QR, ...): source=
)

// Validate refuses, with a *idempay.ValidationError, what Omise would
// refuse or what the adapter could not settle safely.
func (p Provider) Validate(req idempay.ChargeRequest) error {
	if err := p.validateSettings(); err != nil {
		return err
	}
	if err := checkCurrency(req.Currency); err != nil {
		return err
	}
	if err := p.checkSource(req); err != nil {
		return err
	}
	if req.ReturnURL != "" {
		if u, err := url.Parse(req.ReturnURL); err != nil || !u.IsAbs() {
			return wire.Invalid("ReturnURL", "must be an absolute URL")
		}
	}
	for k := range req.Metadata {
		switch {
		case k == IntentMetadataKey || k == NamespaceMetadataKey || k == KeyMetadataKey:
			return wire.Invalid("Metadata", "key %q is reserved for idempay's tags", k)
		case strings.ContainsAny(k, "[]"):
			return wire.Invalid("Metadata", "key %q has square brackets, which the form encoding cannot carry", k)
		}
	}
	for k, v := range req.Extra {
		top, _, _ := strings.Cut(k, "[")
		switch {
		case !formName.MatchString(k):
			return wire.Invalid("Extra", "key %q is not an Omise form parameter name", k)
		case ownParams[top]:
			return wire.Invalid("Extra", "key %q is set from the request's own fields", k)
		case k == ExtraCapture && v != "true" && v != "false":
			return wire.Invalid("Extra", "capture must be true or false, got %q", v)
		}
	}
	return nil
}

// checkCurrency refuses a currency whose ISO exponent is not Omise's:
// Omise counts JPY in yen and every other currency in hundredths.
func checkCurrency(code string) error {
	iso, err := idempay.CurrencyExponent(code)
	if err != nil {
		return err
	}
	if want := Exponent(code); iso != want {
		return wire.Invalid("Currency", "%s has %d minor-unit digits in ISO 4217 but %d at Omise; refused rather than charged at a guessed scale",
			strings.ToUpper(code), iso, want)
	}
	return nil
}

// Exponent returns the number of minor-unit digits of Omise's amount for
// a currency: 0 for JPY, Omise's only zero-decimal currency, else 2.
func Exponent(code string) int {
	if strings.EqualFold(code, "JPY") {
		return 0
	}
	return 2
}

func (p Provider) checkSource(req idempay.ChargeRequest) error {
	src := req.Source.Reveal()
	switch {
	case strings.HasPrefix(src, tokenPrefix):
		if req.Customer != "" {
			return wire.Invalid("Customer", "must be empty with a card token: Omise charges a token alone")
		}
	case strings.HasPrefix(src, sourcePrefix):
	case strings.HasPrefix(src, cardPrefix), src == "" && req.Customer != "":
		if strings.HasPrefix(src, cardPrefix) && req.Customer == "" {
			return wire.Invalid("Customer", "is required with a saved card ID")
		}
		if !p.SavedCards {
			return wire.Invalid("Source", "a saved card can be charged again, so a lost attempt could not be settled safely; set Provider.SavedCards to accept it (such intents then settle only by finding their charge)")
		}
	case src == "":
		return wire.Invalid("Source", "is required: a card token (tokn_), a source (src_), or a saved card with its Customer")
	default:
		return wire.Invalid("Source", "must start with tokn_, card_ or src_")
	}
	return nil
}
