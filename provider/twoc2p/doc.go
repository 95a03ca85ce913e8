// Package twoc2p adapts idempay to 2C2P's Payment Gateway API v4.3: a
// Payment Token request per intent, and Payment Inquiry to settle what an
// answer did not.
//
// 2C2P has no idempotency header. The invoiceNo in the signed payload is
// the key in practice: a second token request with the same invoiceNo is
// refused with respCode 9015, not replayed. So the adapter derives the
// invoiceNo from the intent ID and the attempt
// (idempay.TwoC2PAttemptInvoiceNo; attempt 1 is idempay.TwoC2PInvoiceNo),
// which the Client has reserved in the KeyStore before anything is sent:
// after a definite failure, a charge with other parameters begins attempt
// n+1 with a new key and an invoice of its own, and Payment Inquiry asks
// about the record's attempt's invoice, never an earlier one's. The adapter
// is an idempay.LookupBeforeResender: before any resend of an intent that may have
// reached 2C2P, and after any lost or unclassifiable answer (9015 included), the
// Client asks Payment Inquiry. Found settles the intent and is reported as
// a replay (idempay.ReplayFromLookup); 2002 "not found" proves that sending
// again is safe; anything else leaves the outcome unknown with the invoice
// kept. A 9015 is therefore never a failure. The intent's idempotency key
// travels in the idempotencyID field as well.
//
//	client, err := idempay.New(idempay.Config{
//		BaseURL:     "https://sandbox-pgw.2c2p.com",
//		Credentials: idempay.Secret(os.Getenv("TWOC2P_SECRET_KEY")),
//		Provider:    twoc2p.Provider{MerchantID: "JT01", PaymentChannel: []string{"CC"}},
//		Store:       store,
//	})
//
// The signed payload itself (idempay.TwoC2PPaymentToken, TwoC2PInquiry,
// TwoC2PSigner, TwoC2PAmount, TwoC2PInvoiceNo) is built in package idempay,
// for callers who speak to 2C2P without the Client.
//
// # What a successful token request means
//
// A Payment Token request does not move money: it opens a payment that the
// customer completes on 2C2P's page (webPaymentUrl), or that the merchant
// completes with Do Payment. So respCode 0000 on the token request is
// reported as a pending charge (KindPending, Charge.State StatePending),
// with Charge.ID the paymentToken, Charge.AuthorizeURL the webPaymentUrl
// and Charge.Status "0000": Client.Charge returns it with an error matching
// idempay.ErrPending, whose idempay.OutcomeOf is OutcomePending, so that a
// caller who checks only the error never ships an unpaid order. Charging the intent again later (or Settle)
// asks Payment Inquiry, and only its 0000 makes the charge succeeded, with
// Charge.ID the tranRef. A charge found by inquiry before it was paid is
// pending with Charge.ID the invoiceNo and no AuthorizeURL: Payment Inquiry
// does not give a lost paymentToken back, so the customer cannot be sent
// to pay under that invoice; reconcile it with 2C2P before charging the
// order under a new intent ID.
//
// # respCodes
//
// Token request (ReadCharge): 0000, 0001, 2001 pending; 9015 (existing
// invoice), 4200 (tokenised, no payment), 9041 (token already used) and
// any code not listed unknown; 9004, 9005, 9006, 9009, 9010, 9040 invalid;
// 9007, 9042 configuration; 9990 to 9999 server errors (retried after an
// inquiry). An answer whose signature does not verify is unknown, never a
// success. A 5xx is a server error whatever its body.
//
// Payment Inquiry (FindCharge): 0000 succeeded; 0001, 2001 pending; the
// codes Provider.IsDecline accepts declined; 2002 not found; everything
// else, an unsigned success, or an answer that names no invoice or another
// invoice or merchant, unknown; an echoed idempotencyID other than the
// intent's key, a key conflict.
//
// # Credentials and configuration
//
// Config.Credentials is the merchant secret key: it signs every request
// and verifies every answer, and never appears in an error or a log. The
// merchant ID and the channels are set on Provider. The channels decide the
// invoiceNo limit (20 characters with a QR channel, else 50), so they are
// part of the adapter, not of each request: a Client whose channels change
// would derive other invoice numbers for the same intents. Use a separate
// Config.Account for each set of channels. An invoiceNo has no room for the
// Client's namespace, so two idempay accounts on one merchant ID must not
// use overlapping intent IDs: only an echoed idempotencyID (checked when
// present) would tell their invoices apart.
//
// ChargeRequest fields: IntentID, with the attempt, gives invoiceNo (an
// attempt whose invoiceNo does not fit, possible only with a QR channel
// from attempt 10 on, is refused when its request is built, before
// anything is sent, with a *idempay.ValidationError of field Attempt); Amount and Currency give
// amount (as a decimal number, see idempay.TwoC2PAmount) and currencyCode;
// Description (default: the intent ID) gives description; ReturnURL gives
// frontendReturnUrl; Extra keys "userDefined1" to "userDefined5" give those
// fields. Source, Customer and Metadata have no place in a token request
// and are refused, as are other Extra keys.
//
// # Refunds, captures and cancels
//
// Client.Refund, Client.Capture and Client.Cancel go through 2C2P's Payment
// Maintenance API (Payment Action 2.0): processType R refunds, S settles
// (2C2P's capture of a pre-authorised payment, in part or whole), V voids;
// RS (Refund Status) and I (inquiry) look them up. Each request is the
// charge's invoiceNo and the operation's key as idempotencyID, in XML
// encrypted to 2C2P's RSA key (JWE) and signed with the merchant's (JWS);
// the keys are Provider.Maintenance (see ParseMaintenanceKeys), never
// printed, and without them the three calls are refused with
// idempay.ErrNotSupported before anything is stored. 2C2P documents that a
// refund repeated with the same idempotencyID returns the original's
// response; the adapter still resends an operation that may have reached it
// only after its lookup proves it absent, and reads a refusal as speaking
// for its own request only, except 29 and 39 to a capture or cancel,
// which prove the transaction voided or settled.
// Provider.ManualSettlement makes paid charges authorisations, to be
// captured or cancelled. OPERATIONS.md in this directory has the outcome
// tables, and what 2C2P's documentation does not confirm.
package twoc2p
