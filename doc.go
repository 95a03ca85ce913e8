// Package idempay charges a payment exactly once, however often the
// network, the provider or the calling process fails on the way.
//
// A payment intent (the caller's order ID) gets one idempotency key,
// written to a KeyStore before the first byte is sent and sent again by
// every retry, restart and instance sharing the store; idempay makes sure
// it is never lost, never changed, never resent once the provider forgot.
//
// # Start here
//
// Most programs use five names: [New] with a [Config] (Provider, BaseURL,
// Credentials, Store), [Client.Charge] with a [ChargeRequest], and
// [OutcomeOf] to switch on the four outcomes. After a restart,
// [Client.Unresolved] lists what is still open and [Client.Settle] looks an
// intent up at the provider. [Charger] is the one-method interface to mock;
// the idempaytest package has the fakes.
//
//   - Succeeded: a *Charge and a nil error (Replayed when it came from an
//     earlier execution).
//   - Failed: nothing moved: a decline (ErrDeclined), an invalid request
//     (ErrInvalidRequest), a wrong configuration (ErrConfig), an unreached
//     provider.
//   - Pending: accepted, no money moved yet (3-D Secure, a hosted page, an
//     authorisation awaiting capture: ErrAuthorized). Never ship it as paid.
//   - Unknown: money may have moved (ErrOutcomeUnknown). Charge the intent
//     again, with the same request, to resume under the same key.
//
// Client.Refund, Client.Capture and Client.Cancel act on a charged intent
// with the same discipline, each under an operation ID the caller keeps; a
// ledger per intent refuses a refund beyond the charge, whatever crashes
// where (docs/refunds.md). Stores: keystore/memstore (tests),
// keystore/filestore (one process), keystore/postgres and keystore/redis
// (fleets). Providers: OwnAPI here, provider/stripe, provider/omise,
// provider/twoc2p.
//
// # For adapter and store authors
//
// These names are the seams, not the caller's API. An adapter implements
// [Provider] (Name, Validate, NewChargeRequest, ReadCharge returning a
// [Verdict]) and, where the provider allows, the optional interfaces found
// by type assertion: [Finder] (look a charge up), [LookupBeforeResender]
// (ask before any resend), [SecretFielder], and for refunds, captures and
// cancels [Operator], told each operation's [OpType].
// A store implements [KeyStore] and proves it with keystore/storetest.Run;
// [Claim] and [ClaimConfig] are the lease protocol the client, the guard
// and the webhook Deduper share over any store. ARCHITECTURE.md maps them.
package idempay
