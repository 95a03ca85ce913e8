// Package faults holds what the fake servers (internal/fakestripe,
// internal/fakeomise, internal/fake2c2p and the reference server
// internal/refserver) share: the faults they inject into charge requests,
// the seeded and scripted injector that picks them, the connection drop
// that makes an answer vanish, the ledger of real charges that proves no
// intent was charged twice, the key table with leases and fenced commits,
// a clock that moves only when told, the loopback server behind their
// Start functions, and the arrival of a form-encoded charge request.
//
// What a fault means precisely (what is claimed, stored or charged) is
// each server's to say; this package only decides when it strikes.
package faults
