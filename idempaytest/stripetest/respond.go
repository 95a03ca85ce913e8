package stripetest

import (
	"net/http"

	"github.com/idempay/idempay/internal/faults"
)

// apiError is the object under "error" in an error body.
type apiError struct {
	Type          string         `json:"type"`
	Code          string         `json:"code,omitempty"`
	DeclineCode   string         `json:"decline_code,omitempty"`
	Param         string         `json:"param,omitempty"`
	Message       string         `json:"message,omitempty"`
	DocURL        string         `json:"doc_url,omitempty"`
	Charge        string         `json:"charge,omitempty"` // the declined confirmation's charge
	PaymentIntent *PaymentIntent `json:"payment_intent,omitempty"`
}

func (e *apiError) body() []byte { return faults.ErrorBody(e) }

func writeError(w http.ResponseWriter, status int, e *apiError) {
	writeJSON(w, status, e.body())
}

func writeJSON(w http.ResponseWriter, status int, body []byte) { faults.WriteJSON(w, status, body) }

func mustJSON(v any) []byte { return faults.MustJSON(v) }

// newID returns prefix and 24 random base32 characters, Stripe-like.
func newID(prefix string) string { return faults.NewID(prefix, 24) }
