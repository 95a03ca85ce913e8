// Package stripe adapts idempay to Stripe's PaymentIntents API.
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
// A charge is one POST /v1/payment_intents, created and confirmed in one
// step, under the attempt's Idempotency-Key and tagged in its metadata
// with the intent ID, the Client's namespace and the key. Stripe replays
// the stored answer for a key for 24 hours, so idempay resends the same
// key freely within Config.KeyRetention and needs no lookup first; past
// it, the intent is settled by searching PaymentIntents by those tags.
// Search lags, so an empty result proves nothing: the intent stays unknown
// (ErrNotIndexed).
//
// A succeeded PaymentIntent is a success; processing and requires_action
// are pending (the 3-D Secure URL in Charge.AuthorizeURL);
// requires_capture is an authorisation (Charge.Authorized) to capture; a
// 402 card_error or a canceled intent is a decline; a replayed 500 leaves
// the outcome unknown.
//
// Provider.Account, or Provider.ConnectByIntent with ConnectedIntentID,
// acts on Stripe Connect accounts; every request of an intent carries its
// Stripe-Account, and two accounts never share a record. Refunds, captures
// and cancels are POST /v1/refunds and /v1/payment_intents/{id}/capture
// and /cancel, each under the operation's key. Amounts are ISO 4217 minor
// units, converted where Stripe's scale differs (ISK, MGA); a currency
// whose scale Stripe does not document is refused before anything is sent.
//
// Every answer and what it means is tabled in README.md and OPERATIONS.md
// in this directory.
package stripe
