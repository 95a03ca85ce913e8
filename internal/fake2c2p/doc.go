// Package fake2c2p is a fake of 2C2P's Payment Gateway API v4.3, for
// testing idempay's 2C2P adapter (provider/twoc2p): Payment Token and
// Payment Inquiry, with JWT (HS256) payloads in and out under one merchant
// secret, and the failure modes a real network and a real gateway have.
// Forge, SignHS256 and Body make tokens by hand for tests.
//
// It reads and writes JWTs with golang-jwt directly, not with idempay's
// code, so a test against it checks the adapter's wire format against a
// second implementation.
//
// # What it models
//
//   - POST /payment/4.3/paymentToken verifies the payload, validates the
//     fields the way 2C2P documents them (respCodes 9004, 9005, 9006, 9009,
//     9010), refuses an invoiceNo it has seen with 9015 (never a replay),
//     and otherwise opens a transaction awaiting payment and answers 0000
//     with a paymentToken and a webPaymentUrl.
//   - POST /payment/4.3/paymentInquiry answers the transaction of an
//     invoiceNo: 0001 awaiting payment, 2001 in progress, 0000 paid (with
//     tranRef and approvalCode), the decline code set by Decline, or 2002
//     when there is none.
//   - A payload that does not verify gets the plain {"respCode": "9042"}
//     form; an unknown merchant gets plain 9007. Other refusals are signed,
//     or plain with Config.PlainErrors.
//   - The ledger holds one transaction per invoice; Check reports any
//     idempotencyID that opened more than one, which is how a client that
//     changed the invoiceNo of an intent would show.
//   - Pay, PayAll and Decline play the customer's part on the payment page.
//
// # Faults
//
// Each request draws a fault (package internal/faults, shared with the
// other fakes) from seeded random rates (Config.TokenFaults,
// Config.InquiryFaults, SetFaults) or from a script per invoice
// (InjectToken, InjectInquiry):
//
//   - Pre: the connection is closed before anything is done.
//   - Unavailable: 503, before anything is done.
//   - Internal: HTTP 500 with plain respCode 9999, before anything is done.
//   - Mid: the transaction is opened but left "in progress" (inquiry 2001),
//     and the connection is closed: the gateway failed part-way.
//   - Post: the transaction is opened as usual, then the connection is
//     closed instead of answering: the answer is lost.
//
// On an inquiry, which changes nothing, Mid and Post both lose the answer.
//
// Config.OnRequest sees every request whose payload verified, before any
// fault, so a test can check that the client had stored its intent first.
package fake2c2p
