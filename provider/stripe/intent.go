package stripe

import (
	"encoding/json"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// paymentIntent is the part of Stripe's PaymentIntent the adapter reads.
type paymentIntent struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Status             string            `json:"status"`
	Amount             int64             `json:"amount"`
	AmountReceived     int64             `json:"amount_received"`
	Currency           string            `json:"currency"`
	Metadata           map[string]string `json:"metadata"`
	LastPaymentError   *stripeError      `json:"last_payment_error"`
	CancellationReason string            `json:"cancellation_reason"`
	NextAction         *struct {
		Type          string `json:"type"`
		RedirectToURL *struct {
			URL string `json:"url"`
		} `json:"redirect_to_url"`
	} `json:"next_action"`
}

// stripeError is the object under "error" in Stripe's error bodies, and a
// PaymentIntent's last_payment_error.
type stripeError struct {
	Type          string         `json:"type"`
	Code          string         `json:"code"`
	DeclineCode   string         `json:"decline_code"`
	Param         string         `json:"param"`
	Message       string         `json:"message"`
	PaymentIntent *paymentIntent `json:"payment_intent"`
}

func (e *stripeError) apiError() *idempay.APIError {
	return &idempay.APIError{Type: e.Type, Code: e.Code, DeclineCode: e.DeclineCode, Param: e.Param, Message: e.Message}
}

// tags returns the PaymentIntent's idempay tags. Stripe's metadata values
// are strings, so a key present is a tag.
func (pi paymentIntent) tags() wire.Tags {
	ns, hasNS := pi.Metadata[NamespaceMetadataKey]
	key, hasKey := pi.Metadata[KeyMetadataKey]
	return wire.Tags{Intent: pi.Metadata[IntentMetadataKey], Namespace: ns, HasNamespace: hasNS, Key: key, HasKey: hasKey}
}

// parseIntent reads a PaymentIntent body; ok is false when the body is
// not one.
func parseIntent(body []byte) (pi paymentIntent, ok bool) {
	if json.Unmarshal(body, &pi) != nil || pi.ID == "" || (pi.Object != "" && pi.Object != "payment_intent") {
		return paymentIntent{}, false
	}
	return pi, true
}

// verdict says what a PaymentIntent's status means for the money. v
// carries what the answer's headers already said.
func (pi paymentIntent) verdict(v idempay.Verdict) idempay.Verdict {
	ch := &idempay.Charge{ID: pi.ID, Status: pi.Status, Amount: fromStripe(pi.Currency, pi.Amount),
		Currency: strings.ToUpper(pi.Currency)}
	switch pi.Status {
	case "succeeded":
		v.Kind, ch.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "requires_capture":
		// An authorisation (capture_method=manual): what the key guards
		// succeeded, and the record is settled, for a resend could change
		// nothing; but no money moved yet. Authorized makes the Client
		// answer it pending with ErrAuthorized until a capture succeeds
		// (Client.Capture), and failed with ErrCanceled once cancelled.
		v.Kind, ch.State, ch.Authorized = idempay.KindSucceeded, idempay.StateSucceeded, true
	case "processing", "requires_action", "requires_confirmation":
		v.Kind, ch.State = idempay.KindPending, idempay.StatePending
		if pi.NextAction != nil && pi.NextAction.RedirectToURL != nil {
			ch.AuthorizeURL = pi.NextAction.RedirectToURL.URL
		}
	case "requires_payment_method":
		if pi.LastPaymentError != nil && pi.Metadata[ConfirmMetadataKey] == "true" {
			// The adapter's own confirm was declined: Stripe answered it
			// 402, and this is the same PaymentIntent read later (by
			// search after a stored 500 replaced the 402, by retrieve).
			// One decline, one reading: final, as the 402 is.
			e := pi.LastPaymentError.apiError()
			v.Kind, v.Err = idempay.KindDeclined, e
			return v
		}
		// Unconfirmed (the customer confirms it with its client secret),
		// or confirmed by someone else and refused: it can still be
		// confirmed again and then move money, so it is not final.
		v.Kind, ch.State = idempay.KindPending, idempay.StatePending
	case "canceled":
		// A canceled intent can never be confirmed again and moved no
		// money (a canceled authorisation is released).
		msg := "PaymentIntent " + pi.ID + " is canceled"
		if pi.CancellationReason != "" {
			msg += " (" + pi.CancellationReason + ")"
		}
		v.Kind, v.Err = idempay.KindDeclined, &idempay.APIError{Code: "payment_intent_canceled", Message: msg}
		return v
	default:
		v.Kind = idempay.KindUnknown // a status this adapter does not know settles nothing
		return v
	}
	v.Charge = ch
	return v
}
