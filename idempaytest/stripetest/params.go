package stripetest

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idempay/idempay/internal/faults"
)

// createParams is a validated POST /v1/payment_intents body.
type createParams struct {
	amount        int64
	currency      string
	metadata      map[string]string
	confirm       bool
	paymentMethod string
	customer      string
	description   string
	returnURL     string
	captureMethod string
}

// Stripe's documented limits.
const (
	maxAmount      = 99999999
	maxMetadata    = 50
	maxMetaKeyLen  = 40
	maxMetaValLen  = 500
	metadataPrefix = "metadata["
)

// passThrough are parameters the fake accepts without acting on them.
var passThrough = regexp.MustCompile(`^(setup_future_usage|statement_descriptor|statement_descriptor_suffix|` +
	`receipt_email|off_session|transfer_group|on_behalf_of|automatic_payment_methods\[(enabled|allow_redirects)\]|` +
	`payment_method_types\[\d+\])$`)

var currencyCode = regexp.MustCompile(`^[a-z]{3}$`)

// parseCreate validates a body as Stripe would, answering the error Stripe
// would give. Such refusals are not stored under the key.
func parseCreate(form url.Values) (createParams, *apiError) {
	p := createParams{captureMethod: "automatic"}
	md, err := parseForm(form, p.set)
	if err != nil {
		return p, err
	}
	p.metadata = md
	return p, p.check(form)
}

// parseForm walks a form as Stripe validates one: each parameter given
// once, metadata[k] within Stripe's limits (and at most 50 keys), every
// other parameter handed to set.
func parseForm(form url.Values, set func(name, v string) *apiError) (map[string]string, *apiError) {
	md := map[string]string{}
	for name, vals := range form {
		if len(vals) != 1 {
			return nil, invalidParam(name, "Parameter %s was given more than once.", name)
		}
		v := vals[0]
		if k, ok := strings.CutPrefix(name, metadataPrefix); ok && strings.HasSuffix(k, "]") {
			k = strings.TrimSuffix(k, "]")
			if utf8.RuneCountInString(k) > maxMetaKeyLen || utf8.RuneCountInString(v) > maxMetaValLen || k == "" {
				return nil, invalidParam(name, "Metadata keys can be up to %d characters and values up to %d.", maxMetaKeyLen, maxMetaValLen)
			}
			md[k] = v
			continue
		}
		if err := set(name, v); err != nil {
			return nil, err
		}
	}
	if len(md) > maxMetadata {
		return nil, invalidParam("metadata", "You can only specify up to %d metadata keys.", maxMetadata)
	}
	return md, nil
}

// unknownParam is Stripe's refusal of a parameter it does not know.
func unknownParam(name string) *apiError {
	return &apiError{Type: faults.TypeInvalid, Code: "parameter_unknown", Param: name, Message: "Received unknown parameter: " + name}
}

func (p *createParams) set(name, v string) *apiError {
	var err error
	switch name {
	case "amount":
		p.amount, err = strconv.ParseInt(v, 10, 64)
		if err != nil || p.amount < 1 {
			return invalidParam(name, "Invalid positive integer")
		}
	case "currency":
		p.currency = v
	case "confirm":
		p.confirm, err = strconv.ParseBool(v)
		if err != nil {
			return invalidParam(name, "Invalid boolean: %s", v)
		}
	case "payment_method":
		p.paymentMethod = v
	case "customer":
		p.customer = v
	case "description":
		p.description = v
	case "return_url":
		p.returnURL = v
	case "capture_method":
		if v != "automatic" && v != "automatic_async" && v != "manual" {
			return invalidParam(name, "Invalid capture_method: must be one of automatic, automatic_async, or manual")
		}
		p.captureMethod = v
	default:
		if !passThrough.MatchString(name) {
			return unknownParam(name)
		}
	}
	return nil
}

// check applies the rules that span parameters.
func (p *createParams) check(form url.Values) *apiError {
	switch {
	case p.amount == 0:
		return &apiError{Type: faults.TypeInvalid, Code: "parameter_missing", Param: "amount", Message: "Missing required param: amount."}
	case p.amount > maxAmount:
		return &apiError{Type: faults.TypeInvalid, Code: "amount_too_large", Param: "amount", Message: "Amount must be no more than 99,999,999"}
	case !currencyCode.MatchString(p.currency):
		return invalidParam("currency", "Invalid currency: %s", p.currency)
	case p.returnURL != "" && !p.confirm:
		return invalidParam("return_url", "You can only specify a return_url when confirm is true.")
	case p.confirm && p.paymentMethod == "":
		return &apiError{Type: faults.TypeInvalid, Code: "payment_intent_unexpected_state", Param: "payment_method",
			Message: "You cannot confirm this PaymentIntent because it's missing a payment method."}
	case p.confirm && p.returnURL == "" && mayRedirect(form):
		// What Stripe answers when automatic payment methods (its default)
		// may need a redirect and there is nowhere to come back to.
		return invalidParam("return_url", "This PaymentIntent is configured to accept payment methods that may redirect; "+
			"provide a return_url or set automatic_payment_methods[allow_redirects] to never.")
	}
	return nil
}

// mayRedirect reports whether automatic payment methods with redirects are
// in force: the default, unless payment method types are listed or
// redirects are turned off.
func mayRedirect(form url.Values) bool {
	for name := range form {
		if strings.HasPrefix(name, "payment_method_types[") {
			return false
		}
	}
	return form.Get("automatic_payment_methods[allow_redirects]") != "never" &&
		form.Get("automatic_payment_methods[enabled]") != "false"
}

func invalidParam(param, format string, args ...any) *apiError {
	return &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid", Param: param, Message: fmt.Sprintf(format, args...)}
}
