package idempay

import (
	"context"
	"errors"
	"time"
)

// KeyStore keeps one Record per payment intent: the idempotency key chosen
// for it, a fingerprint of its parameters and, once known, its outcome.
//
// The Client writes the record with Reserve before the first byte of a charge
// is sent, so that every retry, every restart of the process and every other
// instance of the service sharing the store sends the same key. Reserve is the
// one write that must be durable before it returns; Resolve need not be,
// because a lost resolution only reopens the intent and resuming it with the
// same key is answered by a replay.
//
// Records are identified by (Namespace, IntentID): the same intent ID under
// two namespaces (two providers, or two merchant accounts) is two records.
//
// Implementations must be safe for concurrent use by multiple goroutines and,
// for stores shared by a fleet, by multiple processes. Every implementation
// should pass the conformance suite in package keystore/storetest.
type KeyStore interface {
	// Reserve stores r if no record exists for (r.Namespace, r.IntentID)
	// and returns it with Created and Claimed set. If a record exists it is
	// returned as stored, and the lease on it is taken for r.LeaseOwner
	// until r.LeaseUntil (Claimed set, UpdatedAt set to r.UpdatedAt) when the
	// record is open or pending and its lease is free, expired at
	// r.UpdatedAt, or already held by r.LeaseOwner. A succeeded or failed
	// record, or one leased to another owner, is returned with Claimed false
	// and unchanged. The insert or claim must be durable before Reserve
	// returns.
	Reserve(ctx context.Context, r Record) (Reservation, error)

	// Resolve records what is known about an open or pending intent and
	// releases its lease. It changes nothing and returns, checking in this
	// order: ErrNotFound when there is no record, ErrKeyMismatch when the
	// stored key is not res.Key, ErrAlreadyResolved when the record is
	// already succeeded or failed, and ErrLeaseLost when res.LeaseOwner is
	// set and is not the record's current LeaseOwner. The owner is checked
	// in the same atomic step as the write, so a late release by an
	// instance whose lease was taken over never frees the new holder's
	// lease.
	Resolve(ctx context.Context, res Resolution) error

	// Load returns the record of an intent, or ErrNotFound.
	Load(ctx context.Context, namespace, intentID string) (Record, error)

	// ListOpen returns up to limit records of the namespace whose state is
	// StateOpen or StatePending, oldest first. A limit of zero or less
	// means no limit.
	ListOpen(ctx context.Context, namespace string, limit int) ([]Record, error)

	// Expire deletes succeeded and failed records created before cutoff and
	// returns how many it deleted. A deleted record is forgotten: charging
	// its intent again makes a new key, so keep records longer than any
	// caller may retry an intent. Open and pending records are never
	// deleted by Expire: they stand for money that may have moved and
	// must be settled first.
	Expire(ctx context.Context, cutoff time.Time) (int, error)
}

// State is where an intent stands in its KeyStore.
type State string

const (
	// StateOpen: the key is reserved and a charge may have been sent with
	// it; the outcome is not known.
	StateOpen State = "open"
	// StatePending: the provider accepted the charge but has not finished
	// it (3-D Secure, an asynchronous method). The key need not be sent
	// again; the charge is settled by looking it up by ProviderRef.
	StatePending State = "pending"
	// StateSucceeded: the charge succeeded; Result holds it.
	StateSucceeded State = "succeeded"
	// StateFailed: the charge definitely did not move money (a decline, an
	// invalid request); Result holds the refusal.
	StateFailed State = "failed"
)

// Closed reports whether s is a final state.
func (s State) Closed() bool { return s == StateSucceeded || s == StateFailed }

// Valid reports whether s is one of the four states.
func (s State) Valid() bool {
	switch s {
	case StateOpen, StatePending, StateSucceeded, StateFailed:
		return true
	}
	return false
}

// Record is what a KeyStore keeps for one payment intent.
type Record struct {
	Namespace   string    // provider and account, e.g. "stripe:acct_123"
	IntentID    string    // the caller's order or intent ID
	Key         string    // the idempotency key sent with every attempt
	Fingerprint string    // hash of the charge parameters, to refuse re-use
	State       State     // open until the outcome is known
	CreatedAt   time.Time // when the key was reserved
	UpdatedAt   time.Time // last Reserve claim or Resolve
	LeaseOwner  string    // the client instance charging it now, if any
	LeaseUntil  time.Time // the lease is free from this instant on
	ProviderRef string    // the provider's charge ID, once known
	Result      []byte    // the encoded outcome, for replay without a request
}

// ClaimableBy reports whether a Reserve by owner at the instant at may take
// the lease of the stored record r: r is open or pending, and its lease is
// free, held by owner already, or expired (it is free from LeaseUntil on,
// so a crashed holder is replaced without waiting one more tick). Stores
// written in Go use it so that they all apply the one rule; stores in SQL
// or Lua state the same rule there, and storetest checks them all.
func (r Record) ClaimableBy(owner string, at time.Time) bool {
	if r.State.Closed() {
		return false
	}
	return r.LeaseOwner == "" || r.LeaseOwner == owner || !at.Before(r.LeaseUntil)
}

// Reservation is the answer of KeyStore.Reserve.
type Reservation struct {
	Record  Record // the record as stored after the call
	Created bool   // this call inserted the record: its key is new
	Claimed bool   // the caller holds the lease and may send
}

// Resolution is what KeyStore.Resolve writes.
type Resolution struct {
	Namespace   string
	IntentID    string
	Key         string    // must equal the stored key
	State       State     // StateOpen only releases the lease
	ProviderRef string    // kept unless empty
	Result      []byte    // kept unless nil
	At          time.Time // becomes UpdatedAt
	// LeaseOwner, when set, makes Resolve conditional on the lease: if the
	// record's current LeaseOwner is not LeaseOwner (another instance
	// claimed it after the lease ran out, or it was released), Resolve
	// changes nothing and returns ErrLeaseLost. Set it to release a lease
	// (State StateOpen), so that a slow instance cannot free the lease of
	// the instance that took over. Empty skips the check: a known outcome
	// is a fact whoever holds the lease, and is recorded as one.
	LeaseOwner string
}

// Errors returned by KeyStore implementations.
var (
	// ErrNotFound: the store holds no record for the intent.
	ErrNotFound = errors.New("idempay: no record for intent")
	// ErrKeyMismatch: Resolve named a key other than the stored one.
	ErrKeyMismatch = errors.New("idempay: stored key differs")
	// ErrAlreadyResolved: Resolve was called on a succeeded or failed record.
	ErrAlreadyResolved = errors.New("idempay: intent already resolved")
	// ErrLeaseLost: Resolve named a LeaseOwner that no longer holds the
	// record's lease (it ran out and another instance claimed it, or it was
	// released). Nothing was changed. After a release this is expected and
	// harmless: the lease was no longer the caller's to give back.
	ErrLeaseLost = errors.New("idempay: lease no longer held by this owner")
)
