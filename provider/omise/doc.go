// Package omise adapts idempay to Omise's (Opn Payments') Charges API.
//
//	client, err := idempay.New(idempay.Config{
//		BaseURL:     "https://api.omise.co",
//		Credentials: idempay.Secret(os.Getenv("OMISE_SECRET_KEY")),
//		Provider:    omise.Provider{},
//		Store:       store,
//	})
//
// A charge is one POST /charges, tagged in its metadata with the intent
// ID, the Client's namespace and the attempt's key. Omise documents no
// de-duplication by key, so nothing relies on the Idempotency-Key it is
// also sent: the Client looks the charge up (FindCharge) before every
// resend of a key that may have reached Omise. A charge found settles the
// intent; only a lookup that proves no charge exists allows the resend.
//
// A decline is not an error at Omise but a charge with status "failed": a
// definite decline. "successful" is a success; "pending" is pending (3-D
// Secure or an offsite source, at Charge.AuthorizeURL) unless it is an
// authorisation made with capture=false (Charge.Authorized), to capture.
// used_token after an ambiguous attempt proves nothing: the outcome is
// unknown and the charge is looked up.
//
// A lookup lists the charges created since the key was reserved and
// matches both tags. A pass that finds none is proof only because the
// charges the Provider allows are made with single-use tokens (tokn_) or
// sources (src_): a saved card can be charged twice, so it is refused
// unless SavedCards is set, and then nothing a lookup misses is proof.
//
// Refunds, captures and reverses are POST /charges/{id}/refunds, /capture
// and /reverse, looked up before a resend as charges are. The return from
// 3-D Secure carries no intent ID: keep the pending charge's ID, or
// recover the intent with Provider.IntentOfCharge, and call Client.Settle.
//
// Every answer and what it means is tabled in README.md and OPERATIONS.md
// in this directory.
package omise
