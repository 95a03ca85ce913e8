// Package webhook receives payment providers' webhooks safely: it checks
// that a request was signed by the provider, recently, and runs the
// application's handler exactly once per event although the provider
// delivers each event at least once, possibly to several instances at a
// time.
//
// # The three parts
//
//   - Verifiers: *Stripe (the Stripe-Signature header) and *Omise (the
//     Omise-Signature and Omise-Signature-Timestamp headers) check an
//     HMAC-SHA256 over the timestamp and the raw body, in constant time,
//     accept any of several signatures (secret rotation), and refuse a
//     timestamp further than DefaultTolerance from the clock. Failures
//     match ErrNoSignature, ErrBadSignature or ErrTimestamp; no error
//     holds a secret or the expected signature.
//   - Deduper: an event's ID is reserved in an idempay.KeyStore, in a
//     namespace of its own ("webhook:stripe:acct_123"), with a lease, before
//     the handler runs. A handled event is a Duplicate from then on; an
//     event being handled elsewhere is ErrInProgress; a failed (or
//     panicking) handler releases the lease so the next delivery runs it
//     again; a crashed process leaves a lease that runs out. The
//     fingerprint of the event's data is kept, so an unhandled event ID
//     seen again with other data is refused (ErrEventMismatch), while
//     delivery bookkeeping outside the data may change between deliveries.
//   - Handler: an http.Handler putting them together, answering 200 for
//     handled and duplicate events, 400 for a bad signature, 409 while the
//     event is in progress, 500 when the handler failed (see HTTPStatus).
//
// # Use
//
//	verifier, err := webhook.NewStripe(idempay.Secret(os.Getenv("STRIPE_WEBHOOK_SECRET")))
//	dedup, err := webhook.NewDeduper(store, "stripe", "acct_123")
//	h, err := webhook.NewHandler(verifier, dedup, func(ctx context.Context, ev webhook.Event) error {
//		// ev.Body is verified. Re-fetch the object it names before acting.
//		return nil
//	})
//	http.Handle("POST /webhooks/stripe", h)
//
// The store can be the one the idempay.Client uses: the namespaces never
// meet. Give each endpoint (provider and account) its own Deduper.
//
// # Trust the API, not the payload
//
// A valid signature proves the provider sent the body; it does not make
// the body the current state. Events arrive late and out of order, and a
// charge.complete may describe a state that has already moved on. Omise
// advises re-fetching the charge (GET /charges/{id}) after verifying and
// acting on that; the same is sound for Stripe. To settle an idempay
// intent from a webhook, find the intent from the charge (for Omise,
// provider/omise's IntentOfCharge) and call Client.Settle.
//
// # Omise's signature scheme
//
// Omise's documentation recommends verifying webhook signatures. The
// details implemented here (the header names, the base64-decoded secret as
// the HMAC key, the signed string timestamp + "." + body, two signatures
// during rotation) come from independent implementations that agree with
// one another, not from official text. Check against Omise's current
// documentation before relying on it in production.
//
// # Records and their lifetime
//
// Handled events are closed records and go when the store's Expire deletes
// settled records: keep them longer than the provider may redeliver an
// event and anyone may resend one from a dashboard, or a late copy runs the
// handler again. Events whose handler failed and never succeeded stay open
// and are never expired: ListOpen on Deduper.Namespace lists them.
//
// # Tests
//
// Package idempaytest signs webhooks for consumers' tests:
// SignStripeWebhook and SignOmiseWebhook return the headers a provider
// would send for a body, a secret and a time.
package webhook
