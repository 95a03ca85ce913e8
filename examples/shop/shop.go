package main

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
)

// shop is a backend-for-frontend with two money endpoints: /checkout
// charges an order, /refund gives part or all of it back. Both run behind
// the guard (the frontend's Idempotency-Key makes a double click or a
// resend one request) and move money through idempay (the order ID and the
// refund ID make a retry, a restart or another instance one charge and one
// refund). GET /orders/{id} shows the order's money as idempay's ledger
// has it.
type shop struct {
	pay *idempay.Client
}

// routes returns the shop's mux, its POSTs behind g.
func (s *shop) routes(g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /checkout", g.Wrap(http.HandlerFunc(s.checkout)))
	mux.Handle("POST /refund", g.Wrap(http.HandlerFunc(s.refund)))
	mux.HandleFunc("GET /orders/{id}", s.order)
	return mux
}

type checkoutRequest struct {
	OrderID       string `json:"order_id"`
	Amount        int64  `json:"amount"`   // minor units: yen
	Currency      string `json:"currency"` // JPY
	PaymentMethod string `json:"payment_method"`
	ReturnURL     string `json:"return_url,omitempty"` // where 3-D Secure comes back to
}

type checkoutAnswer struct {
	OrderID      string `json:"order_id"`
	ChargeID     string `json:"charge_id,omitempty"`
	Status       string `json:"status"` // paid, pending, declined, failed, unknown
	AuthorizeURL string `json:"authorize_url,omitempty"`
	Error        string `json:"error,omitempty"`
}

// checkout charges the order once, under the request's key: the
// frontend's Idempotency-Key is the guard's record and Stripe's key.
//
//   - 201 paid, 202 pending (3-D Secure: send the customer to
//     authorize_url): stored by the guard, replayed to every resend.
//   - 402 declined or failed: no money moved; marked final, so a resend of
//     the same request gets the same answer (another card is another
//     request, with another key).
//   - 503 unknown: money may have moved. The guard releases the key, and a
//     resend runs this handler again, which resumes the charge under the
//     same key: Stripe answers it from its record.
func (s *shop) checkout(w http.ResponseWriter, r *http.Request) {
	var req checkoutRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OrderID == "" {
		guard.MarkFinal(r.Context())
		writeJSON(w, http.StatusBadRequest, checkoutAnswer{OrderID: req.OrderID, Status: "bad request"})
		return
	}
	key, _ := guard.KeyFrom(r.Context())
	ch, err := s.pay.Charge(r.Context(), idempay.ChargeRequest{IntentID: req.OrderID, Amount: req.Amount,
		Currency: req.Currency, Source: idempay.Secret(req.PaymentMethod), ReturnURL: req.ReturnURL, Key: key})
	ans := checkoutAnswer{OrderID: req.OrderID}
	if ch != nil {
		ans.ChargeID, ans.AuthorizeURL = ch.ID, ch.AuthorizeURL
	}
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		ans.Status = "paid"
		writeJSON(w, http.StatusCreated, ans)
	case idempay.OutcomePending:
		ans.Status = "pending"
		writeJSON(w, http.StatusAccepted, ans)
	case idempay.OutcomeFailed:
		guard.MarkFinal(r.Context())
		ans.Status, ans.Error = "failed", err.Error()
		if errors.Is(err, idempay.ErrDeclined) {
			ans.Status = "declined"
		}
		writeJSON(w, http.StatusPaymentRequired, ans)
	default:
		unknown(w, &ans.Status)
		writeJSON(w, http.StatusServiceUnavailable, ans)
	}
}

type refundRequest struct {
	OrderID  string `json:"order_id"`
	RefundID string `json:"refund_id"` // the back office's refund row, made before the first click
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Reason   string `json:"reason,omitempty"` // duplicate, fraudulent, requested_by_customer
}

type refundAnswer struct {
	OrderID   string `json:"order_id"`
	RefundID  string `json:"refund_id"`
	StripeID  string `json:"stripe_refund_id,omitempty"`
	Amount    int64  `json:"amount,omitempty"`
	Status    string `json:"status"`              // refunded, pending, refused, failed, unknown
	Available int64  `json:"available,omitempty"` // what is left to refund, when refused for the amount
	Error     string `json:"error,omitempty"`
}

// refund refunds once per refund ID, however often it is clicked, from
// however many tabs and instances; the order's refunds, those in flight
// included, never exceed what it was charged.
//
//   - 200 refunded, 202 pending (Stripe has not paid it out yet): stored.
//   - 422 refused: more than is left to refund, or nothing refundable yet.
//     Nothing was sent. Not marked final: the key is released, since the
//     answer may change (an unknown refund may settle as failed and free
//     its amount), and a resend asks again.
//   - 422 failed: Stripe refused it, or the request is invalid: final.
//   - 503 unknown: the refund may have been made. The key is released; a
//     resend resumes the same refund under its key.
func (s *shop) refund(w http.ResponseWriter, r *http.Request) {
	var req refundRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OrderID == "" || req.RefundID == "" {
		guard.MarkFinal(r.Context())
		writeJSON(w, http.StatusBadRequest, refundAnswer{OrderID: req.OrderID, RefundID: req.RefundID, Status: "bad request"})
		return
	}
	op, err := s.pay.Refund(r.Context(), idempay.RefundRequest{RefundID: req.RefundID, IntentID: req.OrderID,
		Amount: req.Amount, Currency: req.Currency, Reason: req.Reason})
	ans := refundAnswer{OrderID: req.OrderID, RefundID: req.RefundID}
	if op != nil {
		ans.StripeID, ans.Amount = op.ID, op.Amount
	}
	var amountErr *idempay.AmountError
	switch o := idempay.OutcomeOf(err); {
	case o == idempay.OutcomeSucceeded:
		ans.Status = "refunded"
		writeJSON(w, http.StatusOK, ans)
	case o == idempay.OutcomePending:
		ans.Status = "pending"
		writeJSON(w, http.StatusAccepted, ans)
	case o == idempay.OutcomeFailed && (errors.As(err, &amountErr) || errors.Is(err, idempay.ErrNotRefundable) ||
		errors.Is(err, idempay.ErrChargeNotSucceeded)):
		ans.Status, ans.Error = "refused", err.Error()
		if amountErr != nil {
			ans.Available = amountErr.Available
		}
		writeJSON(w, http.StatusUnprocessableEntity, ans)
	case o == idempay.OutcomeFailed:
		guard.MarkFinal(r.Context())
		ans.Status, ans.Error = "failed", err.Error()
		writeJSON(w, http.StatusUnprocessableEntity, ans)
	default:
		unknown(w, &ans.Status)
		writeJSON(w, http.StatusServiceUnavailable, ans)
	}
}

// unknown answers an outcome that is not known yet: retry shortly.
func unknown(w http.ResponseWriter, status *string) {
	w.Header().Set("Retry-After", "1")
	*status = "unknown"
}

type orderAnswer struct {
	OrderID    string `json:"order_id"`
	Charged    int64  `json:"charged"`
	Refunded   int64  `json:"refunded"`
	InFlight   int64  `json:"refunds_in_flight"`
	Refundable int64  `json:"refundable"`
	Refunds    int    `json:"refunds"`
}

// order shows what idempay's ledger knows of the order's money.
func (s *shop) order(w http.ResponseWriter, r *http.Request) {
	l, err := s.pay.Ledger(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, idempay.ErrChargeNotSucceeded):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, orderAnswer{OrderID: l.IntentID, Charged: l.Amount, Refunded: l.Refunded,
		InFlight: l.RefundsInFlight, Refundable: l.Refundable, Refunds: len(l.Ops)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
