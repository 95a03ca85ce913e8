// Package idempay charges a payment exactly once, however often the
// network, the provider or the calling process fails on the way.
//
// # The promise
//
// A payment intent (the caller's order or intent ID) gets one idempotency
// key. The key is written to a KeyStore before the first byte of the charge
// is sent, and every retry, every later call after a crash or a restart, and
// every other instance of the service sharing the store sends that same key.
// The provider de-duplicates by key, so the customer is charged at most
// once; idempay makes sure the key is never lost, never changed, and never
// resent after the provider has forgotten it.
//
// # Outcomes
//
// Every charge ends in one of three outcomes, and idempay never reports a
// failure when the truth is unknown:
//
//   - Succeeded: Charge returns a *Charge. Replayed says the result came
//     from an earlier execution (the provider's replay header, the store, or
//     a lookup), not a new one.
//   - Failed: nothing moved. A decline (ErrDeclined), an invalid request
//     (ErrInvalidRequest, *ValidationError), a refused configuration
//     (ErrConfig), or a provider that was never reached (ErrUnreachable).
//   - Unknown: an attempt may have reached the part of the provider that
//     moves money and no answer settled it (ErrOutcomeUnknown is in the
//     chain). The key stays open; charge the intent again, with the same
//     request, to resume with the same key and settle it.
//
// OutcomeOf(err) gives the outcome of any error Charge returns.
//
// # What is retried
//
// Timeouts and connection errors (also after the request was written),
// 5xx other than 501, 409 (the key is in flight) and 429 are retried with
// exponential backoff and jitter, honouring Retry-After within a cap.
// Declines, validation errors, 401/403/404 and a key used with other
// parameters are not. A replayed 5xx is a failure the provider stored for
// the key: it ends the charge at once, outcome unknown. See RetryPolicy.
//
// # Stores and providers
//
// KeyStore implementations live in sub-packages: keystore/memstore (tests),
// keystore/filestore (durable, one process: the default), keystore/postgres
// and keystore/redis (fleets). Each passes keystore/storetest.Run.
// Providers implement Provider: OwnAPI (a merchant's own API) here,
// provider/stripe, provider/omise and provider/twoc2p (2C2P, whose
// invoiceNo takes the place of a key). The signed 2C2P payload builder
// (TwoC2PPaymentToken, TwoC2PSigner, TwoC2PAmount, TwoC2PInvoiceNo) is here,
// for callers who speak to 2C2P without a Client.
package idempay
