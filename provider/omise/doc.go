// Package omise adapts idempay to Omise's (Opn Payments') Charges API.
//
// A charge is one POST /charges, form-encoded, authenticated with HTTP
// Basic (the secret key as user, an empty password) under Omise-Version
// 2019-05-29, tagged with the intent ID, the Client's namespace and the
// attempt's key in metadata[idempay_intent], metadata[idempay_namespace]
// and metadata[idempay_key]; a lookup settles the current attempt only
// with a charge under its key. The
// intent's key is sent as Idempotency-Key too, but Omise documents neither
// de-duplication by key nor a replay header, so nothing relies on it:
// Provider implements idempay.LookupBeforeResender, and the Client asks FindCharge
// before every resend of a key that may have reached Omise. A charge found
// settles the intent without resending; only a lookup that proves no
// charge exists allows the resend.
//
//	client, err := idempay.New(idempay.Config{
//		BaseURL:     "https://api.omise.co",
//		Credentials: idempay.Secret(os.Getenv("OMISE_SECRET_KEY")),
//		Provider:    omise.Provider{},
//		Store:       store,
//	})
//
// # What each answer means
//
// A decline is not an error at Omise: the charge comes back 200 with
// status "failed", failure_code and failure_message, which ReadCharge
// reports as a definite decline. Status "successful" is a success;
// "pending" is pending (3-D Secure or an offsite source: the customer is
// sent to Charge.AuthorizeURL, and the provider's charge ID is stored with
// the intent) unless the charge is already authorised and waits for
// capture (made with capture=false): a settled authorisation, with
// Charge.Authorized set, which Client.Charge answers pending with
// idempay.ErrAuthorized until Client.Capture captures it. Errors are
// {"object": "error", "code", "message"}; used_token means the card token
// was consumed by some charge, which after an ambiguous attempt is not
// proof of failure, so it is KindUnknown and the guard looks the charge up.
// README.md in this directory has the full table.
//
// # Lookups and proof
//
// FindCharge retrieves GET /charges/{id} when the intent's record holds
// the charge ID, and otherwise lists the charges created since the
// intent's key was reserved (GET /charges?from=..., 100 a page: the newest
// page first, where a charge whose answer was just lost is, then the whole
// window oldest first) and matches both tags (metadata is any JSON: only
// string values are tags; see Provider.LegacyNamespace for charges tagged
// before namespaces). The list
// reads charges, not a search index, and a pass to the end that finds
// none is taken as proof that no charge exists (KindNotFound) only because every
// charge the Provider allows by default is made with a single-use card
// token (tokn_) or source (src_): should a charge still be in flight at
// Omise, resending the same token cannot charge twice, it gets used_token.
// A saved card (card_ with a customer, or a customer's default card) can
// be charged again, so such charges are refused unless SavedCards is set,
// and with SavedCards a lookup that finds nothing is never proof.
//
// # Refunds, captures and reverses
//
// Provider implements idempay.Operator for the three, and looks each up:
// POST /charges/{id}/refunds (tagged like charges, with the
// refund ID in metadata[idempay_op]), /capture (capture_amount) and
// /reverse, lookup-guarded like charges. A refund is found by reading the
// charge's refunds for its tags, and only two passes without it
// (Provider.RefundRecheck apart) prove it absent; a capture or reverse is
// found by retrieving the charge. No error answer is a definite refusal:
// the Client makes it a failure only when no earlier request of the
// operation may have acted. OPERATIONS.md in this directory has the table.
//
// # 3-D Secure
//
// The return callback after 3-D Secure carries no intent ID. Keep the
// charge ID of the pending Charge, or recover the intent with
// Provider.IntentOfCharge, then call Client.Settle with the intent ID: it
// looks the charge up by ID and records how it ended.
package omise
