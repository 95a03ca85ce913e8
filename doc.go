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
// # Start here
//
// Most programs use five names: [New] with a [Config] (Provider, BaseURL,
// Credentials, Store), [Client.Charge] with a [ChargeRequest], and
// [OutcomeOf] to switch on the four outcomes below. After a restart,
// [Client.Unresolved] lists what is still open and [Client.Settle] looks an
// intent up at the provider. [Charger] is the one-method interface to mock;
// the idempaytest package has the fakes. Everything else is either a detail
// of those (errors, RetryPolicy, Charge's fields) or a seam for the authors
// of adapters and stores, listed at the end.
//
// # Outcomes
//
// Every charge ends in one of four outcomes, and idempay never reports a
// failure when the truth is unknown:
//
//   - Succeeded: Charge returns a *Charge. Replayed says the result came
//     from an earlier execution (the provider's replay header, the store, or
//     a lookup), not a new one.
//   - Failed: nothing moved. A decline (ErrDeclined), an invalid request
//     (ErrInvalidRequest, *ValidationError), a wrong configuration
//     (ErrConfig: refused by New, or by the provider), or a provider that was never reached (ErrUnreachable).
//   - Pending: the provider accepted the charge but no money has moved
//     yet (3-D Secure, a hosted page, konbini, an authorisation awaiting
//     capture): ErrPending is in the chain. Never ship it as paid.
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
// # Refunds, captures and cancels
//
// Client.Refund, Client.Capture and Client.Cancel act on a charged intent
// with the discipline of Charge, on the same engine: each names its own
// operation ID (a refund ID the caller persists, as it persists an intent
// ID), gets one key in its own KeyStore record (namespace
// "<namespace>/refund", "/capture" or "/cancel") before the first byte,
// the same retries, one flight per operation per process detached from
// the caller, the same four outcomes through OutcomeOf, and is settled by
// lookup where the adapter offers one (Operator.FindOp).
//
// The intent's money is kept in a ledger: one more record per intent
// ("<namespace>/ledger"), written only under its lease. Before an
// operation's first byte it is entered there, checked against every
// operation of the intent that may still move money (pending and unknown
// refunds count as refunded until they settle), and refused if it would
// refund more than was charged or captured, capture more than was
// authorised, or capture or cancel twice: ErrRefundExceeds,
// ErrCaptureExceeds (with an *AmountError), ErrNotRefundable,
// ErrAuthorizationClosed, ErrNotAuthorization, ErrChargeNotSucceeded.
// Whatever crashes where, the refunds of an intent never exceed its charge.
// Client.Ledger reads what is charged, captured, refunded and left.
//
// The ledger is begun when the charge succeeds, holds the charge's facts
// and each operation's outcome (written before the operation's record is
// closed), and is never deleted: it answers alone once the store's
// retention has deleted the records (see KeyStore, Retention). A refund
// weeks after its charge is checked against it; a paid intent charged
// again, or an operation asked again, after its record was deleted is
// answered from it, never sent again. An operation ID names one operation
// of one intent (ErrOpOfOtherIntent otherwise), and a caller's key one
// charge or operation of the account (a *ValidationError on Key
// otherwise, with nothing sent).
//
// # Authorisations
//
// A charge made with manual capture (Stripe's capture_method=manual,
// Omise's capture=false, the own API's "capture": false) has put a hold
// on the customer's card and moved no money to the merchant: it moves only
// when captured, and never if the hold is cancelled or expires. Charge
// therefore answers it with outcome pending and ErrAuthorized, and the
// *Charge (Charge.Authorized set, State StatePending: the two say the
// same), not with success: the one outcome a
// caller ships on, OutcomeSucceeded, stays true to its word ("the money
// moved"), so code that switches on OutcomeOf alone never ships an
// uncaptured order as paid. A merchant whose model is authorise-then-ship
// says so where it decides, with errors.Is(err, ErrAuthorized), and calls
// Capture when it ships. The charge's record is settled (its key is never
// resent); once a capture succeeds, Charge of the intent answers succeeded
// (Charge.Captured says how much), and once a cancel succeeds, failed with
// ErrCanceled. Adapters mark an authorisation by setting Charge.Authorized.
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
// # For adapter and store authors
//
// These names are the seams, not the caller's API. An adapter implements
// [Provider] (Name, Validate, NewChargeRequest, ReadCharge returning a
// [Verdict]) and, where the provider allows, the optional interfaces found
// by type assertion: [Finder] (look a charge up), [LookupBeforeResender] (ask before
// any resend), [SecretFielder], and for refunds, captures and cancels
// [Operator], told each operation's [OpType].
// A store implements [KeyStore] and proves it with keystore/storetest.Run;
// [Claim] and [ClaimConfig] are the lease protocol the client, the guard
// and the webhook Deduper share over any store. ARCHITECTURE.md maps them.
package idempay
