package refserver

import (
	"net/http"

	"github.com/idempay/idempay/internal/faults"
)

// apiError is the object under "error" in every error body.
type apiError = faults.APIError

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

func mustJSON(v any) []byte { return faults.MustJSON(v) }

func writeJSON(w http.ResponseWriter, status int, body []byte) { faults.WriteJSON(w, status, body) }

// newID returns prefix followed by 26 random base32 characters.
func newID(prefix string) string { return faults.NewID(prefix, 26) }
