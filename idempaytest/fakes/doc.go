// Package fakes holds what every fake server of idempaytest shares and a
// test reads: the faults they inject (Fault, Rates), a clock that moves only
// when told (Clock), what they saw (Traffic), and the books of the money
// they moved (Ledger), with the duplicate-money check (Check, *MoneyError).
//
// The fakes themselves are one package per provider, in the shape of
// net/http/httptest: idempaytest.NewServer for a merchant's own API,
// idempaytest/stripetest, idempaytest/omisetest and idempaytest/twoc2ptest.
// A test that uses only one of them compiles only that one and this package.
//
// # Faults
//
// A Fault strikes one request, scripted (a fake's Fail, FailKey and
// FailNext methods) or drawn at random from a seeded source at Rates. The
// names say when it strikes; what exactly it means (what is claimed,
// stored or charged) is each fake's to say in its package doc:
//
//	Pre          the connection is dropped before the fake acts: nothing happens
//	Unavailable  503 before the fake acts: nothing happens
//	Mid          the connection is dropped while the fake acts, before money moves
//	Internal     500 while the fake acts, before money moves (stored under the key where the provider stores it)
//	Post         the money moves, then the connection is dropped instead of answering
//
// # The duplicate-money check
//
// Every fake records each movement of money in its Ledger: a Charge when a
// charge succeeds or an authorisation is held, an Op for each refund,
// capture and cancel. Ledger.Check (each fake's CheckMoney) proves what a
// client must never cause: an intent charged twice, a refund made twice, a
// charge refunded beyond what was charged or captured, an authorisation
// captured twice or beyond its amount, captured and cancelled. The check
// recomputes everything from the records; it does not trust the fake's own
// refusals, so a fake told to be lenient (carrying out what a real provider
// refuses) shows what a client sent that it should not have.
package fakes
