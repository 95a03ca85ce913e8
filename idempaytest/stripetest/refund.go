package stripetest

import (
	"maps"
	"slices"
)

// Refund is the fake's refund, in Stripe's JSON shape (the Refund object's
// fields; the ones of other payment methods than cards are null).
type Refund struct {
	ID                 string            `json:"id"`                  // re_...
	Object             string            `json:"object"`              // "refund"
	Amount             int64             `json:"amount"`              // in Stripe's units
	BalanceTransaction *string           `json:"balance_transaction"` // txn_..., null while pending
	Charge             string            `json:"charge"`              // the PaymentIntent's latest charge, ch_...
	Created            int64             `json:"created"`             // Unix seconds
	Currency           string            `json:"currency"`            // lower case
	Metadata           map[string]string `json:"metadata"`            // idempay_op among them
	PaymentIntent      string            `json:"payment_intent"`      // pi_...
	Reason             *string           `json:"reason"`              // duplicate, fraudulent, requested_by_customer
	ReceiptNumber      *string           `json:"receipt_number"`      // always null
	Status             string            `json:"status"`              // succeeded, pending, failed
	FailureReason      *string           `json:"failure_reason"`      // set when failed
	// Always null here: Connect reversals, destination details.
	SourceTransferReversal *string `json:"source_transfer_reversal"`
	TransferReversal       *string `json:"transfer_reversal"`   // always null
	DestinationDetails     any     `json:"destination_details"` // always null

	account string // the secret that created it: lookups are scoped to it
}

func (r *Refund) clone() Refund {
	c := *r
	c.Metadata = maps.Clone(r.Metadata)
	return c
}

// addRefund stores a new refund.
func (st *intentStore) addRefund(r Refund) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := r.clone()
	st.refunds[r.ID] = &c
	st.order = append(st.order, r.ID)
}

func (st *intentStore) refund(id string) (Refund, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.refunds[id]
	if !ok {
		return Refund{}, false
	}
	return r.clone(), true
}

// listRefunds returns the account's refunds that match, newest first, as
// Stripe lists them.
func (st *intentStore) listRefunds(account string, match func(*Refund) bool) []Refund {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []Refund
	for _, id := range slices.Backward(st.order) {
		if r := st.refunds[id]; r.account == account && match(r) {
			out = append(out, r.clone())
		}
	}
	return out
}

// settleRefund moves a pending refund to succeeded or failed and reports
// whether it found one.
func (st *intentStore) settleRefund(id string, succeed bool) (Refund, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.refunds[id]
	if !ok || r.Status != "pending" {
		return Refund{}, false
	}
	r.Status = "succeeded"
	r.BalanceTransaction = optional(newID("txn_"))
	if !succeed {
		r.Status, r.FailureReason = "failed", optional("declined")
	}
	return r.clone(), true
}

// refundsOf returns a PaymentIntent's refunds, newest first, whatever the
// account.
func (st *intentStore) refundsOf(pi string) []Refund {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []Refund
	for _, id := range slices.Backward(st.order) {
		if r := st.refunds[id]; r.PaymentIntent == pi {
			out = append(out, r.clone())
		}
	}
	return out
}
