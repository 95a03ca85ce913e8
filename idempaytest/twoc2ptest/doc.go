// Package twoc2ptest is a fake of 2C2P's Payment Gateway for tests, in the
// shape of net/http/httptest: NewServer starts it on a loopback port, URL
// and Client point an idempay.Client (with provider/twoc2p) at it, Close
// stops it. It serves PGW v4.3's Payment Token and Payment Inquiry, with
// JWT (HS256) payloads in and out under one merchant secret, and Payment
// Maintenance (refunds, settlements, voids) in the sealed XML 2C2P
// documents for Payment Action 2.0. Forge, SignHS256, Body, Seal and Open
// make payloads by hand for tests.
//
// It reads and writes JWTs with golang-jwt and JOSE with the standard
// library, not with idempay's code, so a test against it checks the
// adapter's wire format against a second implementation. It lives under
// idempaytest for the reasons stripetest's doc gives.
//
// # Payment Token and Payment Inquiry
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
//     or plain with WithPlainErrors.
//   - Pay, PayAll and Decline play the customer's part on the payment page.
//
// # Payment Maintenance
//
// POST /PaymentAction/2.0/action takes, as its body, a compact JWS (PS256,
// signed with the merchant's private key) whose payload is a compact JWE
// (RSA-OAEP with A256GCM, encrypted to 2C2P's public key: GatewayKey) of
// the XML
//
//	<PaymentProcessRequest><version>4.3</version><merchantID>JT01</merchantID>
//	  <processType>R</processType><invoiceNo>INV1</invoiceNo>
//	  <actionAmount>25.00</actionAmount><idempotencyID>refund-1</idempotencyID></PaymentProcessRequest>
//
// and answers, sealed the other way (encrypted to the merchant's key,
// signed with 2C2P's), a PaymentProcessResponse: version, timeStamp,
// respCode and respDesc (2C2P's Payment Maintenance result codes), the
// processType, invoiceNo, amount, status (its status codes) and
// referenceNo, the idempotencyID echoed, and for Refund Status a refundList.
// processType I inquires (status A approved, S settled, V voided, AP
// awaiting, PF failed), V voids an authorisation before settlement (21 once
// settled, 29 twice), S settles it in part or whole (30 beyond it, 39
// twice, 29 after a void), R refunds a settled payment (status RF, or RP
// with WithPendingRefunds until CompleteRefund; 41 before settlement or
// after a void, 40 beyond what is left, 49 when fully refunded), RS lists
// the refunds with their referenceNo, amount, status and idempotencyID.
// A payment is settled when paid unless WithManualSettlement. What cannot
// be verified is answered in plain XML with 13, what cannot be decrypted
// with 96, another merchant with 03.
//
// What the fake could not confirm from 2C2P's public documentation, and
// chose: what idempotencyID does beyond refunds (2C2P's refund parameter
// table documents it, "a repeated request with the same idempotencyID will
// return the same response as the original request", and result codes 50
// "Same Idempotent Key exists with different Type" and 51 "... with status
// Pending"; the fake de-duplicates by it only with
// WithMaintenanceKeys, as an adapter must not assume it); the answer's
// element names beyond respCode and respDesc, and the refundList of Refund
// Status; that a pending refund answers 00 with status RP (rather than
// result code 42 "Refund pending"); that the token is posted as the raw
// body; JOSE header fields beyond alg and enc; RSA-OAEP's hash (SHA-1, as
// RFC 7518 defines RSA-OAEP).
//
// # Faults
//
// Each request draws a fault (idempaytest/fakes) from seeded random rates
// (WithFaultRates, WithEndpointFaultRates, SetFaultRates) or from a script
// per invoice (Fail, FailInquiry) or per idempotencyID or invoice
// (FailMaintenance):
//
//   - Pre: the connection is closed before anything is done.
//   - Unavailable: 503, before anything is done.
//   - Internal: HTTP 500 with plain respCode 9999 (99 for maintenance),
//     before anything is done.
//   - Mid: a token request's transaction is opened but left "in progress"
//     (inquiry 2001), and the connection closed: the gateway failed
//     part-way; a maintenance request is dropped before it acts.
//   - Post: the transaction is opened (the refund, settlement or void
//     made) as usual, then the connection is closed instead of answering.
//
// On an inquiry, which changes nothing, Mid and Post both lose the answer.
//
// # The books
//
// Ledger records each paid transaction (an authorisation with
// WithManualSettlement), keyed by invoiceNo with its idempotencyID, and
// each refund, settlement and void; CheckMoney proves none was made twice
// or beyond the payment, and that no idempotencyID paid two invoices.
// CheckInvoices reports any idempotencyID that opened more than one
// transaction, paid or not: how a client that changed the invoiceNo of an
// attempt would show.
package twoc2ptest
