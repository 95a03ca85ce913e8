// Package twoc2p adapts idempay to 2C2P's Payment Gateway API v4.3: a
// Payment Token request per intent, and Payment Inquiry to settle what an
// answer did not.
//
//	client, err := idempay.New(idempay.Config{
//		BaseURL:     "https://sandbox-pgw.2c2p.com",
//		Credentials: idempay.Secret(os.Getenv("TWOC2P_SECRET_KEY")),
//		Provider:    twoc2p.Provider{MerchantID: "JT01", PaymentChannel: []string{"CC"}},
//		Store:       store,
//	})
//
// 2C2P has no idempotency header: a second token request with the same
// invoiceNo is refused (9015), not replayed. So the invoiceNo is derived
// from the intent ID and the attempt (idempay.TwoC2PAttemptInvoiceNo),
// reserved before anything is sent, and the Client asks Payment Inquiry
// before any resend and after any lost or unreadable answer: found settles
// the intent, 2002 "not found" proves a resend safe, anything else leaves
// it unknown. A 9015 is never a failure.
//
// A token request moves no money: it opens a payment the customer
// completes on 2C2P's page. Its 0000 is a pending charge (Charge.ID the
// paymentToken, Charge.AuthorizeURL the webPaymentUrl) and Client.Charge
// returns it with an error matching idempay.ErrPending; only Payment
// Inquiry's 0000, asked by a later Charge or Settle, makes it succeeded.
//
// Config.Credentials is the merchant secret key, which signs every request
// and verifies every answer. The channels decide the invoiceNo's length
// limit, so they belong to the Client: use a separate Config.Account for
// each set of channels. Source, Customer and Metadata have no place in a
// token request and are refused; Extra may carry userDefined1 to
// userDefined5.
//
// Refunds, captures (settlements) and cancels (voids) go through Payment
// Maintenance, sealed with the keys in Provider.Maintenance
// (ParseMaintenanceKeys); without them they are refused with
// idempay.ErrNotSupported. The signed payload builder is in package
// idempay (TwoC2PPaymentToken, TwoC2PSigner, ...). The respCodes, the
// invoiceNo rules and what 2C2P's documentation leaves open are in
// README.md and OPERATIONS.md in this directory.
package twoc2p
