// Package twoc2ptest is a fake of 2C2P's Payment Gateway for tests, in the
// shape of net/http/httptest: NewServer starts it on a loopback port, URL
// and Client point an idempay.Client (with provider/twoc2p) at it, Close
// stops it. idempaytest/clients.TwoC2P does the wiring, with FastRetry.
//
// It serves PGW v4.3's Payment Token and Payment Inquiry, with JWT (HS256)
// payloads in and out under one merchant secret, and Payment Maintenance
// (refunds, settlements, voids) in the sealed XML (a JWS over a JWE) that
// 2C2P documents for Payment Action 2.0. Forge, SignHS256, Body, Seal and
// Open make payloads by hand for tests. It reads and writes them with
// golang-jwt and the standard library, not idempay's code, so a test
// against it checks the adapter against a second implementation.
//
// A Payment Token request opens a transaction awaiting payment, and an
// invoiceNo it has seen is refused (9015), never replayed; Pay, PayAll and
// Decline play the customer's part on the payment page, and Payment
// Inquiry answers the transaction's state.
//
// Faults are drawn from seeded rates (WithFaultRates,
// WithEndpointFaultRates) or scripted per invoice (Fail, FailInquiry) or
// per idempotencyID (FailMaintenance). Ledger records each paid
// transaction and each refund, settlement and void; CheckMoney proves none
// was made twice or beyond the payment, and CheckInvoices that no
// idempotencyID opened two transactions.
//
// Every code and answer it gives, and what it chose where 2C2P's public
// documentation is silent, is in README.md in this directory.
package twoc2ptest
