package stripetest

import "github.com/idempay/idempay/idempaytest/fakes"

// Stats counts what the server saw and did.
type Stats struct {
	// Traffic counts the charge requests (POST /v1/payment_intents): their
	// Keys and LastReplayed by intent (metadata[idempay_intent]).
	fakes.Traffic
	// Ops counts the refund, capture and cancel requests, by operation ID
	// (metadata[idempay_op]) or, without one, by PaymentIntent.
	Ops fakes.Traffic
	// Retrievals, Searches and RefundLookups count GET
	// /v1/payment_intents/{id}, GET /v1/payment_intents/search and GET
	// /v1/refunds (lists and retrievals).
	Retrievals, Searches, RefundLookups int
	// ByAccount counts every request by its Stripe-Account header (Stripe
	// Connect's connected account; "" for requests on the platform's own).
	ByAccount map[string]int
}
