package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// bff is the service the frontend talks to: /checkout, under the guard,
// charges through idempay. The frontend's Idempotency-Key names one user
// action: it is the BFF's record, and the provider's key of the action's
// first attempt (idempay.ChargeRequest.BaseKey); a later attempt, begun
// after an outage, goes under idempay.AttemptKey(key, n).
type bff struct {
	client *idempay.Client
	slow   *dice // sometimes slower than the frontend waits
}

type checkoutRequest struct {
	OrderID   string `json:"order_id"`
	AmountJPY int64  `json:"amount_jpy"`
	CardToken string `json:"card_token"`
}

// checkoutAnswer is what the frontend is told: never the *idempay.Charge
// itself, whose Key and Raw (the provider's answer) are the BFF's own.
type checkoutAnswer struct {
	OrderID      string `json:"order_id"`
	ChargeID     string `json:"charge_id,omitempty"`
	Status       string `json:"status"` // paid, pending, declined, invalid, retry
	AuthorizeURL string `json:"authorize_url,omitempty"`
}

// routes returns the BFF's mux with /checkout behind g.
func (b *bff) routes(g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /checkout", g.Wrap(http.HandlerFunc(b.checkout)))
	return mux
}

// checkout charges the order under the request's key and answers with the
// outcome (the status table is in the package doc of guard):
//
//	succeeded        201 paid      stored: every retry gets it
//	pending          202 pending   stored: the frontend follows AuthorizeURL
//	declined         402 declined  marked final, stored: a decline stays one
//	invalid          422 invalid   marked final, stored
//	failed, nothing  503 retry     released: the retry with the same key
//	charged (outage)               begins the next attempt
//	unknown          503 retry     released: the retry resumes the same
//	                               attempt under the same key, and the
//	                               provider answers it from its record
func (b *bff) checkout(w http.ResponseWriter, r *http.Request) {
	var req checkoutRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || req.OrderID == "" {
		guard.MarkFinal(r.Context()) // a retry of this body cannot do better
		writeJSON(w, http.StatusBadRequest, checkoutAnswer{OrderID: req.OrderID, Status: "bad request"})
		return
	}
	if b.slow.chance(0.15) {
		time.Sleep(250 * time.Millisecond) // longer than the frontend waits
	}
	key, _ := guard.KeyFrom(r.Context())
	ch, err := b.client.Charge(r.Context(), idempay.ChargeRequest{
		IntentID: req.OrderID, Amount: req.AmountJPY, Currency: "JPY",
		Source: idempay.Secret(req.CardToken), BaseKey: key,
	})
	a := checkoutAnswer{OrderID: req.OrderID}
	switch {
	case err == nil:
		a.ChargeID, a.Status = ch.ID, "paid"
		writeJSON(w, http.StatusCreated, a)
	case errors.Is(err, idempay.ErrPending) && ch != nil:
		a.ChargeID, a.Status, a.AuthorizeURL = ch.ID, "pending", ch.AuthorizeURL
		writeJSON(w, http.StatusAccepted, a)
	case errors.Is(err, idempay.ErrDeclined):
		guard.MarkFinal(r.Context())
		a.Status = "declined"
		writeJSON(w, http.StatusPaymentRequired, a)
	case errors.Is(err, idempay.ErrInvalidRequest):
		guard.MarkFinal(r.Context())
		a.Status = "invalid"
		writeJSON(w, http.StatusUnprocessableEntity, a)
	default:
		// Failed with nothing charged (the provider unreachable), or
		// unknown: never final, and never MarkFinal (an outage is not a
		// decline). The key is released; the frontend's retry with the
		// same key begins the next attempt, or resumes this one.
		a.Status = "retry"
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, a)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
