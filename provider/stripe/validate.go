package stripe

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Stripe's documented limits, checked by Validate before anything is
// stored or sent, so that a request Stripe would refuse never takes a key.
const (
	// MaxAmount is the largest amount field Stripe accepts: eight digits,
	// in Stripe's units (see Exponent).
	MaxAmount = 99_999_999
	// MaxMetadataKeys counts every metadata key, idempay's included
	// (idempay_intent, idempay_namespace, idempay_key, idempay_confirm), so
	// a caller may set four fewer.
	MaxMetadataKeys = 50
	// MaxMetadataKeyLength and MaxMetadataValueLength are in characters.
	MaxMetadataKeyLength   = 40
	MaxMetadataValueLength = 500
)

// Keys of ChargeRequest.Extra the adapter knows and checks. Any other
// Stripe PaymentIntent parameter may be passed too, with its form name
// (e.g. "payment_method_types[0]"), except those the adapter sets itself.
const (
	// ExtraCaptureMethod is "automatic" (default), "automatic_async" or
	// "manual" (authorise now, capture later: the intent then succeeds in
	// status requires_capture).
	ExtraCaptureMethod = "capture_method"
	// ExtraSetupFutureUsage is "on_session" or "off_session".
	ExtraSetupFutureUsage = "setup_future_usage"
	// ExtraOffSession is "true" when the customer is not present; it
	// needs a Source.
	ExtraOffSession = "off_session"
	// ExtraStatementDescriptorSuffix is appended to the account's
	// statement descriptor.
	ExtraStatementDescriptorSuffix = "statement_descriptor_suffix"
	// ExtraReceiptEmail is where Stripe sends the receipt.
	ExtraReceiptEmail = "receipt_email"
)

// ownParams are the parameters NewChargeRequest builds from the request's
// fields; Extra may not set them, or the field and the extra would fight.
var ownParams = map[string]bool{"amount": true, "currency": true, "confirm": true, "payment_method": true,
	"customer": true, "description": true, "return_url": true, "metadata": true}

// reservedKeys are the metadata keys the adapter sets.
var reservedKeys = map[string]bool{IntentMetadataKey: true, NamespaceMetadataKey: true, KeyMetadataKey: true,
	ConfirmMetadataKey: true}

var (
	formName = regexp.MustCompile(`^[a-z_]+(\[[a-z0-9_]+\])*$`)
	enums    = map[string][]string{
		ExtraCaptureMethod:    {"automatic", "automatic_async", "manual"},
		ExtraSetupFutureUsage: {"on_session", "off_session"},
		ExtraOffSession:       {"true", "false"},
	}
)

// Validate refuses, with a *idempay.ValidationError, what Stripe would
// refuse or what the adapter cannot send faithfully.
func (p Provider) Validate(req idempay.ChargeRequest) error {
	if err := p.validateVersion(); err != nil {
		return err
	}
	if err := p.validateIntentAccount("IntentID", req.IntentID); err != nil {
		return err
	}
	amount, err := toStripe(req.Currency, req.Amount)
	if err != nil {
		return err
	}
	if amount > MaxAmount {
		return wire.Invalid("Amount", "%d in Stripe's units exceeds Stripe's maximum %d", amount, MaxAmount)
	}
	if req.ReturnURL != "" {
		if req.Source == "" {
			return wire.Invalid("ReturnURL", "needs a Source: Stripe takes return_url only when confirming")
		}
		if u, err := url.Parse(req.ReturnURL); err != nil || !u.IsAbs() {
			return wire.Invalid("ReturnURL", "must be an absolute URL")
		}
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	return validateExtra(req.Extra, req.Source != "")
}

func validateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataKeys-len(reservedKeys) {
		return wire.Invalid("Metadata", "has %d keys; Stripe allows %d, %d of which idempay uses", len(m), MaxMetadataKeys, len(reservedKeys))
	}
	for k, v := range m {
		switch {
		case reservedKeys[k]:
			return wire.Invalid("Metadata", "key %q is reserved for idempay's tags", k)
		case utf8.RuneCountInString(k) > MaxMetadataKeyLength:
			return wire.Invalid("Metadata", "key %q is longer than %d characters", k, MaxMetadataKeyLength)
		case strings.ContainsAny(k, "[]"):
			return wire.Invalid("Metadata", "key %q has square brackets, which Stripe does not allow", k)
		case utf8.RuneCountInString(v) > MaxMetadataValueLength:
			return wire.Invalid("Metadata", "value of %q is longer than %d characters", k, MaxMetadataValueLength)
		}
	}
	return nil
}

func validateExtra(extra map[string]string, confirming bool) error {
	for k, v := range extra {
		top, _, _ := strings.Cut(k, "[")
		switch {
		case !formName.MatchString(k):
			return wire.Invalid("Extra", "key %q is not a Stripe form parameter name", k)
		case ownParams[top]:
			return wire.Invalid("Extra", "key %q is set from the request's own fields", k)
		case enums[k] != nil && !slices.Contains(enums[k], v):
			return wire.Invalid("Extra", "%s must be one of %s, got %q", k, strings.Join(enums[k], ", "), v)
		case k == ExtraOffSession && !confirming:
			return wire.Invalid("Extra", "%s needs a Source: Stripe takes it only when confirming", k)
		}
	}
	return nil
}
