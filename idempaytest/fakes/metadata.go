package fakes

// The metadata keys under which idempay's adapters tag what they create at
// a provider (Stripe's and Omise's metadata): the fakes read them to tie
// requests, counters, fault scripts and the books to intents and to
// operations.
const (
	// IntentMetadataKey tags a charge with its intent ID
	// (idempay.ChargeRequest.IntentID).
	IntentMetadataKey = "idempay_intent"
	// OpMetadataKey tags a refund or capture with the caller's operation ID
	// (idempay.RefundRequest.RefundID, ...): by it a fake scripts faults,
	// counts requests and finds a refund made twice.
	OpMetadataKey = "idempay_op"
)
