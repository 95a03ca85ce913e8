package stripetest

import (
	"net/url"
	"strconv"

	"github.com/idempay/idempay/internal/faults"
)

// opParams is a validated refund, capture or cancel body.
type opParams struct {
	paymentIntent, charge string // a refund's target
	amount                int64  // amount (refund), amount_to_capture (capture); 0: all that is left
	reason                string // reason (refund), cancellation_reason (cancel)
	metadata              map[string]string
}

// The reasons Stripe accepts.
var (
	refundReasons = []string{"duplicate", "fraudulent", "requested_by_customer"}
	cancelReasons = []string{"duplicate", "fraudulent", "requested_by_customer", "abandoned"}
)

// parseRefund validates a POST /v1/refunds body.
func parseRefund(form url.Values) (opParams, *apiError) {
	var p opParams
	md, err := parseForm(form, func(name, v string) *apiError {
		switch name {
		case "payment_intent":
			p.paymentIntent = v
		case "charge":
			p.charge = v
		case "amount":
			return p.setAmount(name, v)
		case "reason":
			return p.setReason(name, v, refundReasons)
		case "instructions_email", "expand[]", "expand[0]":
		default:
			return unknownParam(name)
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	p.metadata = md
	switch {
	case p.paymentIntent == "" && p.charge == "":
		return p, &apiError{Type: faults.TypeInvalid, Code: "parameter_missing", Param: "payment_intent",
			Message: "One of the following params should be provided for this request: payment_intent or charge."}
	case p.paymentIntent != "" && p.charge != "":
		return p, invalidParam("charge", "You cannot provide both charge and payment_intent.")
	}
	return p, nil
}

// parseCapture validates a POST /v1/payment_intents/{id}/capture body.
func parseCapture(form url.Values) (opParams, *apiError) {
	var p opParams
	md, err := parseForm(form, func(name, v string) *apiError {
		switch name {
		case "amount_to_capture":
			return p.setAmount(name, v)
		case "final_capture", "statement_descriptor", "statement_descriptor_suffix", "expand[]", "expand[0]":
		default:
			return unknownParam(name)
		}
		return nil
	})
	p.metadata = md
	return p, err
}

// parseCancel validates a POST /v1/payment_intents/{id}/cancel body: it
// takes no metadata.
func parseCancel(form url.Values) (opParams, *apiError) {
	var p opParams
	for name, vals := range form {
		switch {
		case len(vals) != 1:
			return p, invalidParam(name, "Parameter %s was given more than once.", name)
		case name == "cancellation_reason":
			if err := p.setReason(name, vals[0], cancelReasons); err != nil {
				return p, err
			}
		case name == "expand[]", name == "expand[0]":
		default:
			return p, unknownParam(name)
		}
	}
	return p, nil
}

func (p *opParams) setAmount(name, v string) *apiError {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid_integer", Param: name, Message: "Invalid positive integer"}
	}
	p.amount = n
	return nil
}

func (p *opParams) setReason(name, v string, allowed []string) *apiError {
	for _, a := range allowed {
		if v == a {
			p.reason = v
			return nil
		}
	}
	return invalidParam(name, "Invalid %s: must be one of %v", name, allowed)
}
