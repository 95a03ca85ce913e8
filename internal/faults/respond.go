package faults

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
)

// The error types of Stripe's vocabulary, which the own-API contract
// shares: the "type" of an error body's "error" object.
const (
	TypeInvalid     = "invalid_request_error"
	TypeIdempotency = "idempotency_error"
	TypeConflict    = "conflict"
	TypeCard        = "card_error"
	TypeAuth        = "authentication_error"
	TypeAPI         = "api_error"
)

// APIError is the object under "error" in an error body of the own-API
// contract, in Stripe's shape.
type APIError struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Param       string `json:"param,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Body encodes e as {"error": e}.
func (e *APIError) Body() []byte { return ErrorBody(e) }

// ErrorBody encodes e as {"error": e}, the error body of Stripe and of the
// own-API contract.
func ErrorBody(e any) []byte {
	return MustJSON(struct {
		Error any `json:"error"`
	}{e})
}

// MustJSON encodes a fake's own answer, whose types cannot fail to encode.
func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("faults: a fake's answer cannot be encoded: " + err.Error())
	}
	return b
}

// WriteJSON writes a complete JSON answer. The client may be gone; nothing
// is to be done about it.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// NewID returns prefix and n random base32 characters (at most 26).
func NewID(prefix string, n int) string { return prefix + rand.Text()[:n] }
