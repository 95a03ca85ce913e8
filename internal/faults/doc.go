// Package faults holds what the fake providers (internal/fakestripe,
// internal/fakeomise) share: the faults they inject into charge requests,
// the seeded and scripted injector that picks them, the connection drop
// that makes an answer vanish, and the ledger of real charges that proves
// no intent was charged twice.
//
// It is a sibling of internal/refserver, not a part of it: refserver keeps
// its own copies so that neither package's tests depend on the other.
package faults
