// Package webhook receives payment providers' webhooks safely: it checks
// that a request was signed by the provider, recently, and runs the
// application's handler exactly once per event although the provider
// delivers each event at least once, possibly to several instances at a
// time.
//
//	verifier, err := webhook.NewStripe(idempay.Secret(os.Getenv("STRIPE_WEBHOOK_SECRET")))
//	dedup, err := webhook.NewDeduper(store, "stripe", "acct_123")
//	h, err := webhook.NewHandler(verifier, dedup, func(ctx context.Context, ev webhook.Event) error {
//		// ev.Body is verified. Re-fetch the object it names before acting.
//		return nil
//	})
//	http.Handle("POST /webhooks/stripe", h)
//
// Three parts:
//
//   - Verifiers, *Stripe and *Omise, check the provider's HMAC-SHA256 over
//     the timestamp and the raw body in constant time, accept any of
//     several secrets (rotation), and refuse a timestamp further than
//     DefaultTolerance from now: ErrNoSignature, ErrBadSignature or
//     ErrTimestamp, with no secret in the error.
//   - Deduper reserves an event's ID in an idempay.KeyStore (the Client's
//     own will do: the namespaces never meet) before the handler runs. A
//     handled event is a Duplicate, one being handled elsewhere is
//     ErrInProgress, a failed handler releases it for the next delivery,
//     and the same ID with other data is ErrEventMismatch. Give each
//     endpoint (provider and account) its own Deduper.
//   - Handler puts them together: 200 for handled and duplicate events, 400
//     for a bad signature, 409 while in progress, 500 when the handler
//     failed (HTTPStatus).
//
// A valid signature proves the provider sent the body, not that it is the
// current state: events arrive late and out of order. Re-fetch the object
// and act on that; to settle an idempay intent, find it from the charge
// (provider/omise's IntentOfCharge) and call Client.Settle. Handled events
// expire with the store's Expire: keep them longer than the provider may
// redeliver. Omise's scheme follows independent implementations, not
// official text (README.md in this directory). For tests, idempaytest's
// SignStripeWebhook and SignOmiseWebhook sign bodies.
package webhook
