package omisetest

import (
	"maps"
	"time"
)

// maxRefunds is how many refunds Omise allows a charge ("fewer than 15
// partial refunds").
const maxRefunds = 15

// Refund is the fake's refund, in Omise's JSON shape.
type Refund struct {
	Object          string         `json:"object"`           // "refund"
	ID              string         `json:"id"`               // rfnd_test_...
	Location        string         `json:"location"`         // /charges/{charge}/refunds/{id}
	Livemode        bool           `json:"livemode"`         // always false
	Amount          int64          `json:"amount"`           // smallest unit
	Currency        string         `json:"currency"`         // the charge's, upper case
	Charge          string         `json:"charge"`           // chrg_test_...
	Transaction     string         `json:"transaction"`      // trxn_test_...
	Created         string         `json:"created_at"`       // ISO 8601
	Voided          bool           `json:"voided"`           // always false: no settlement is modelled
	Status          string         `json:"status"`           // closed; pending, failed with WithPendingRefunds
	Metadata        map[string]any `json:"metadata"`         // idempay_op among them
	FundingAmount   int64          `json:"funding_amount"`   // as amount: one currency
	FundingCurrency string         `json:"funding_currency"` // as currency
}

func (r Refund) clone() Refund {
	r.Metadata = maps.Clone(r.Metadata)
	return r
}

// RefundList is Omise's list object of refunds, as a charge carries it and
// GET /charges/{id}/refunds answers it.
type RefundList struct {
	Object   string   `json:"object"`   // "list"
	From     string   `json:"from"`     // ISO 8601, the list's window
	To       string   `json:"to"`       // ISO 8601
	Offset   int      `json:"offset"`   // of the page
	Limit    int      `json:"limit"`    // of the page
	Total    int      `json:"total"`    // refunds in all
	Order    string   `json:"order"`    // chronological or reverse_chronological
	Location string   `json:"location"` // /charges/{id}/refunds
	Data     []Refund `json:"data"`     // the page
}

func newRefundList(charge string) *RefundList {
	return &RefundList{Object: "list", From: time.Unix(0, 0).UTC().Format(time.RFC3339), Limit: 20,
		Order: "chronological", Location: "/charges/" + charge + "/refunds", Data: []Refund{}}
}
