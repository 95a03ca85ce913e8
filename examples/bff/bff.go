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
// charges through idempay. The frontend's Idempotency-Key is the BFF's
// record and the provider's key: one key end to end.
type bff struct {
	client *idempay.Client
	slow   *dice // sometimes slower than the frontend waits
}

type checkoutRequest struct {
	OrderID   string `json:"order_id"`
	AmountJPY int64  `json:"amount_jpy"`
	CardToken string `json:"card_token"`
}

type checkoutAnswer struct {
	OrderID  string `json:"order_id"`
	ChargeID string `json:"charge_id,omitempty"`
	Status   string `json:"status"`
}

// routes returns the BFF's mux with /checkout behind g.
func (b *bff) routes(g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /checkout", g.Wrap(http.HandlerFunc(b.checkout)))
	return mux
}

// checkout charges the order under the request's key and answers with the
// outcome: 201 succeeded (stored), 402 declined (marked final, stored),
// 202 pending (stored), 503 unknown (released: the retry resumes the
// charge under the same key, and the provider answers it from its record).
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
		Source: idempay.Secret(req.CardToken), Key: key,
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		writeJSON(w, http.StatusCreated, checkoutAnswer{OrderID: req.OrderID, ChargeID: ch.ID, Status: "paid"})
	case idempay.OutcomePending:
		writeJSON(w, http.StatusAccepted, checkoutAnswer{OrderID: req.OrderID, ChargeID: ch.ID, Status: "pending"})
	case idempay.OutcomeFailed:
		guard.MarkFinal(r.Context())
		writeJSON(w, http.StatusPaymentRequired, checkoutAnswer{OrderID: req.OrderID, Status: failure(err)})
	default:
		// Unknown: money may have moved. Releasing the key is safe here,
		// because the retry charges under the same key and the provider
		// answers it from its record; a handler that could not say so would
		// call guard.MarkUnsettled instead.
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, checkoutAnswer{OrderID: req.OrderID, Status: "unknown, retry"})
	}
}

func failure(err error) string {
	if errors.Is(err, idempay.ErrDeclined) {
		return "declined"
	}
	return "failed"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
