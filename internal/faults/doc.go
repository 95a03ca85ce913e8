// Package faults is the engine the fake servers share (idempaytest's own-API
// server through internal/refserver, idempaytest/stripetest, omisetest and
// twoc2ptest): the seeded and scripted injector that picks each request's
// fault, the connection drop that makes an answer vanish, the key table
// with leases and fenced commits, the loopback server, and the arrival of a
// form-encoded request. The vocabulary a test reads (Fault, Rates, Clock,
// the Ledger of money moved) is idempaytest/fakes's.
//
// What a fault means precisely (what is claimed, stored or charged) is
// each server's to say; this package only decides when it strikes.
package faults
