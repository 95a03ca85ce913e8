package refserver

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
)

// Error types of the API, in Stripe's vocabulary.
const (
	typeInvalid     = "invalid_request_error"
	typeIdempotency = "idempotency_error"
	typeConflict    = "conflict"
	typeCard        = "card_error"
	typeAuth        = "authentication_error"
	typeAPI         = "api_error"
)

// apiError is the object under "error" in every error body.
type apiError struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Param       string `json:"param,omitempty"`
	Message     string `json:"message,omitempty"`
}

// body encodes e as {"error": e}.
func (e *apiError) body() []byte {
	return mustJSON(struct {
		Error *apiError `json:"error"`
	}{e})
}

// chargeResult is the body of a successful charge and of a lookup:
// amount_jpy for a JPY charge, as the article answers, amount and currency
// for every charge.
type chargeResult struct {
	OrderID   string `json:"order_id"`
	ChargeID  string `json:"charge_id"`
	Status    string `json:"status"`
	AmountJPY int64  `json:"amount_jpy,omitempty"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

func resultOf(c Charge) chargeResult {
	r := chargeResult{OrderID: c.Intent, ChargeID: c.ID, Status: "succeeded", Amount: c.Amount, Currency: c.Currency}
	if c.Currency == "JPY" {
		r.AmountJPY = c.Amount
	}
	return r
}

// mustJSON encodes values whose types cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("refserver: " + err.Error())
	}
	return b
}

// writeJSON sends a complete JSON response.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone; nothing to do about it
}

// newID returns prefix followed by 26 random base32 characters.
func newID(prefix string) string { return prefix + rand.Text() }
