// Package stripe adapts idempay to Stripe's PaymentIntents API.
//
// A charge is one POST /v1/payment_intents, form-encoded, created and
// confirmed in one step when a payment method is given, carrying the
// intent's idempotency key in the Idempotency-Key header, and tagged with
// the intent ID, the Client's namespace and the attempt's key in
// metadata[idempay_intent], metadata[idempay_namespace] and
// metadata[idempay_key] (and metadata[idempay_confirm]=true when the
// request confirms). Stripe de-duplicates by key for 24 hours and
// replays the stored answer (500s included) with Idempotent-Replayed: true,
// so idempay resends the same key freely within that window and never
// after it: an intent left unknown past Config.KeyRetention is settled by
// searching PaymentIntents by their idempay_intent metadata, and accepting
// only those tagged with the record's namespace and its current attempt's
// key too (see Provider.LegacyNamespace for PaymentIntents tagged before
// namespaces).
//
//	client, err := idempay.New(idempay.Config{
//		BaseURL:     "https://api.stripe.com",
//		Credentials: idempay.Secret(os.Getenv("STRIPE_SECRET_KEY")),
//		Provider:    stripe.Provider{APIVersion: "2024-06-20"},
//		Store:       store,
//	})
//
// New refuses (idempay.ErrConfig) what would fail on the first
// send: no secret key or a publishable one, a BaseURL ending in /v1 (the
// adapter appends it), a Connect setting that could mix accounts' records;
// see Provider.CheckConfig.
//
// # Stripe Connect
//
// Provider.Account acts on one connected account for the whole Client
// (Config.Account must be the same acct_ ID, so that the namespace names
// it); Provider.ConnectByIntent lets each charge name its account in its
// intent ID (ConnectedIntentID: "acct_.../order-1"). Either way every
// request of the intent (the charge, its refunds, captures and cancels,
// and every lookup) carries Stripe-Account, and two accounts never share
// a record.
//
// # What each answer means
//
// Provider.ReadCharge maps Stripe's answers onto idempay's verdicts (see
// README.md in this directory for the full table): a succeeded
// PaymentIntent is a success; processing and requires_action are pending
// (the 3-D Secure URL is in Charge.AuthorizeURL); requires_capture
// (capture_method=manual) is a settled authorisation with
// Charge.Authorized set, which the Client answers pending with
// idempay.ErrAuthorized until a capture succeeds; a 402 card_error and a canceled intent are definite declines, and so is
// a requires_payment_method intent with a last_payment_error that the
// adapter's own request confirmed (the same decline read later, by search
// or retrieve); one it did not confirm is pending, since it can still be
// confirmed again; a replayed 500 is Stripe's stored failure and leaves the
// outcome unknown.
// Stripe-Should-Retry is passed on as Verdict.Retry.
//
// # Refunds, captures and cancels
//
// Provider implements idempay.Operator for refunds, captures and cancels,
// and looks each up (see OPERATIONS.md in this directory for the tables): POST
// /v1/refunds, POST /v1/payment_intents/{id}/capture and /cancel, each
// under the operation's key. A refund is tagged as a charge is, with the
// refund ID in metadata[idempay_op] besides the intent, namespace and
// attempt's key, and is looked up by listing the PaymentIntent's refunds
// (or retrieving it, once its ID is known) and taking the one with those
// tags; the whole list without it proves that the attempt refunded
// nothing (a list, unlike search, does not lag). A capture adds
// metadata[idempay_op] to the PaymentIntent, and it and a cancel are
// looked up by retrieving the PaymentIntent. A refusal Stripe replays
// for the key (Idempotent-Replayed on a 400) is definite; a fresh one is
// failed only if no earlier attempt may have reached Stripe.
//
// # Amounts
//
// ChargeRequest.Amount is in the currency's ISO 4217 minor units. Stripe
// agrees for almost every currency, including 15 of its 16 zero-decimal
// ones (JPY, KRW, ...). For ISK, which ISO counts in whole krónur but Stripe
// in hundredths, the adapter multiplies by 100 on the way out and divides
// on the way back; for MGA, which ISO counts in hundredths but Stripe in
// whole ariary, it divides (only whole ariary can be sent). Currencies whose ISO exponent differs from Stripe's
// two-decimal default in ways Stripe does not document are refused before
// anything is stored or sent, rather than charged at a guessed scale.
//
// # Lookups
//
// Provider implements idempay.Finder but not idempay.LookupBeforeResender: Stripe
// de-duplicates by key, so a resend within the window is answered by a
// replay and needs no lookup first. FindCharge retrieves the PaymentIntent
// by ID when the intent's record holds one, and otherwise searches by
// metadata. Search is eventually consistent (usually under a minute behind,
// longer during incidents), so an empty result is never taken as proof that
// no payment exists: FindCharge then answers ErrNotIndexed and the intent
// stays unknown.
package stripe
