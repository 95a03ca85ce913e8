package idempay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The key index: one record per caller's key, in <namespace>/key, named by
// the key, whose fingerprint names the one charge or operation the key
// belongs to. The first Reserve of a key inserts it, atomically, so of two
// intents charged with one key at once only one gets it; the other is
// refused before anything is stored or sent for it, and stays chargeable
// under another key. The record is never closed, so the store never
// expires it: a key stays its owner's for the store's life, as providers
// answer a key used again with other parameters with an error that would
// leave the second intent's outcome unknown for good.
const keyIndexKey = "key-index"

// keyOwner is what a caller's key belongs to: a charge of an intent, or a
// refund, capture or cancel by its operation ID.
type keyOwner struct {
	kind string // "charge", or the OpType
	id   string // the intent ID, or the operation ID
}

func (o keyOwner) fingerprint() string {
	sum := sha256.Sum256([]byte("idempay-key-owner-v1\x00" + o.kind + "\x00" + o.id))
	return hex.EncodeToString(sum[:])
}

func (c *Client) keyNamespace() string { return c.namespace + "/key" }

// claimKey makes key owner's, or finds it is already, before owner's
// record is reserved. A key another charge or operation owns is refused:
// a *ChargeError, outcome failed, with a *ValidationError on Key. A store
// error leaves it unknown: nothing was sent by this call, but nothing was
// looked up either.
func (c *Client) claimKey(ctx context.Context, key string, owner keyOwner) error {
	fp := owner.fingerprint()
	cfg := c.claims.withDefaults()
	// The lease a Reserve takes is left to run out: nobody waits on it,
	// and the fingerprint alone answers every later call. On a store that
	// keeps its writes in order the insert needs no sync of its own: the
	// key is only ever sent under a reservation, whose sync comes after
	// it and carries it (see WriteOrderKeeper).
	res, err := c.store.Reserve(ctx, ReserveRequest{Namespace: c.keyNamespace(), ID: key, Attempt: 1,
		Key: keyIndexKey, Fingerprint: fp, Owner: cfg.NewOwner(), Lease: cfg.Lease, Unsent: c.ordered()})
	switch {
	case err != nil:
		return &ChargeError{IntentID: owner.id, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("%w: key index: %w", ErrStore, err)}
	case res.Record.Fingerprint != fp:
		return &ChargeError{IntentID: owner.id, Outcome: OutcomeFailed,
			Err: invalid("Key", "belongs to another charge or operation of this account; a key names one attempt of one intent or operation")}
	}
	return nil
}
