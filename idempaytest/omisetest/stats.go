package omisetest

import "github.com/idempay/idempay/idempaytest/fakes"

// Stats counts what the server saw and did.
type Stats struct {
	// Traffic counts the charge requests (POST /charges): their Keys and
	// LastReplayed (always false: Omise marks no replay) by intent
	// (metadata[idempay_intent]), their error Codes.
	fakes.Traffic
	// Ops counts the refund, capture and reverse requests, by operation ID
	// (metadata[idempay_op]) or, without one, by charge.
	Ops fakes.Traffic
	// Retrievals, Lists and RefundLookups count GET /charges/{id}, GET
	// /charges and GET /charges/{id}/refunds (lists and retrievals).
	Retrievals, Lists, RefundLookups int
}
