// Package fakestripe is a fake of the part of Stripe's API that idempay's
// Stripe adapter speaks: creating a PaymentIntent (POST
// /v1/payment_intents, form-encoded), retrieving one and searching them by
// metadata. It keeps Stripe's idempotency semantics, which stripe-mock
// (a stateless validator) does not:
//
//   - A key is bound to the parameters of its first request: another body
//     under it gets 400 with type idempotency_error.
//   - While a request with the key runs, others get 409
//     idempotency_key_in_use; the claim carries a lease, so one whose
//     handler crashed frees the key when the lease expires.
//   - Once execution starts the result is stored, 500s included, and every
//     later request with the key gets it again with Idempotent-Replayed:
//     true. Requests refused by validation or authentication are not stored.
//   - Keys are forgotten after Config.Retention (24 hours): a key resent
//     later executes again and charges again, which is why idempay never
//     resends an old key.
//   - Search is eventually consistent: a PaymentIntent becomes visible to
//     search only Config.SearchDelay after its creation.
//
// Every answer carries Request-Id; Stripe-Should-Retry is sent when
// Config.ShouldRetry is set. A PaymentIntent carries what Stripe's real
// ones carry beside the fields idempay reads, secrets included: its
// client_secret, and a payment_method that, for a test card alias such as
// pm_card_visa, is a new PaymentMethod ID rather than the alias sent.
//
// The payment method decides the outcome: one containing "decline" (any
// case) is declined with 402 card_error (decline_code insufficient_funds
// if it also contains "insufficient", generic_decline otherwise); one
// containing "3ds" or "threeDSecure" needs 3-D Secure (requires_action
// with a redirect URL, finished by Server.Complete); one containing
// "processing" stays processing until Complete; any other succeeds, or
// waits in requires_capture when capture_method is manual. Without a
// payment method the intent waits in requires_payment_method. The Ledger
// records each succeeded or authorised intent: a second entry for one
// idempay intent is a double charge.
//
// Faults (package internal/faults) strike charge requests, at random with
// a seed or scripted: Pre drops the connection before anything; Unavailable
// answers 503 before anything; Mid claims the key and drops the connection
// without charging, leaving the claim to its lease; Internal claims the
// key and stores a 500; Post charges, stores the answer and drops the
// connection instead of sending it.
package fakestripe
