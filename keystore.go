package idempay

import (
	"context"
	"errors"
	"time"
)

// KeyStore keeps one Record per payment intent: the idempotency key of its
// current attempt, a fingerprint of that attempt's parameters, a lease that
// says which flight may send it now and, once known, its outcome.
//
// The Client writes the record with Reserve before the first byte of a charge
// is sent, so that every retry, every restart of the process and every other
// instance of the service sharing the store sends the same key. Reserve is
// a write that must always be durable before it returns; Resolve must be
// when the Resolution says Durable, and may be lost in a crash otherwise.
// The Claim sets Durable from the state it writes (ClaimConfig.DurableFor,
// and the table in ARCHITECTURE.md): every failed close, since its loss
// would reopen an attempt whose key may never have reached the provider,
// and a resume would then send it for the first time; and every close and
// stored release of a caller whose results nothing could replay (a webhook
// handler's, a guarded endpoint's, the ledger's). What may be lost is a
// charge's or an operation's succeeded or pending close, whose key the
// provider has seen: the record reopens, and resuming it is answered by the
// provider's replay or lookup, or refused once the key is past retention;
// and a bare release, whose lease then runs out.
//
// # One clock
//
// Every instant in a record (CreatedAt, UpdatedAt, ClosedAt, LeaseUntil) is
// stamped by the store, from one clock that all the processes sharing it
// see alike: PostgreSQL's now(), Redis's TIME, the file store's process. The
// callers' clocks may be skewed against each other by minutes; they only ever
// measure elapsed time against their own readings. Ages ("is this key older
// than the provider keeps keys?") are computed from Reservation.Now and the
// record's CreatedAt, both on the store's clock, and leases run out on it.
//
// # Attempts
//
// An intent is one order; it may take several attempts to pay, each with its
// own key and parameters, of which at most one succeeds. The record holds the
// current attempt and keeps the earlier ones, all definitely failed, in
// History. A new attempt begins only from a failed record (see Reserve).
//
// Records are identified by (Namespace, ID): the same intent ID under
// two namespaces (two providers, or two merchant accounts) is two records.
//
// # Retention: what may be deleted, and what never is
//
// A store deletes only closed records (succeeded or failed), and only once
// closed for longer than its retention (Expire; the file store's sweep,
// Redis's WithClosedTTL). The Client arranges that nothing still depends
// on a record when it closes:
//
//   - <namespace>/ledger holds one record per intent, from the charge's
//     success on: the charge's facts (amount, currency, attempt, key, the
//     provider's charge ID) and every refund, capture and cancel attempt,
//     with its amount, key and outcome. It is never closed, so never
//     deleted: refund IDs and keys are remembered for the store's life.
//   - <namespace>/key holds one record per caller's key (ChargeRequest.Key,
//     RefundRequest.Key, ...), naming the one charge or operation it
//     belongs to. Never closed, never deleted.
//   - A charge's record is closed succeeded only after its facts are in
//     the ledger; an operation's record is closed with a success or a
//     decline only after its ledger entry says so. A failure that rests on
//     the lease (nothing this flight sent arrived) is written into the
//     ledger just after its close; if that write is lost, the entry stays
//     unsettled and keeps its amount counted until SettleRefund (Capture,
//     Cancel) settles it: never under-counted.
//   - Open and pending records are never deleted: money may still move.
//
// So a retention as short as the store allows loses no money's truth: a
// refund weeks after its charge reads the ledger; a charge of a paid
// intent whose record is gone is answered from the ledger, never sent; an
// operation asked again after its record is gone is answered from its
// entry, never made again. What a deleted record does cost is local
// replay detail (the provider's raw answer, its request ID). Keep closed
// records at least as long as the provider keeps keys (24 hours at Stripe
// and Omise) so that a retry within that window replays from the store:
// the file store keeps them 7 days by default (WithRetention); the memory
// store and PostgreSQL delete only when Expire is called; Redis deletes
// them WithClosedTTL after they close (none by default).
//
// Refund windows: how long after a charge the provider accepts a refund is
// the provider's rule, not the store's; the ledger has no end, so any
// window is covered. The material the adapters were built from confirms
// none for refunds; for authorisations, Omise documents expired_charge for
// a capture or reverse more than 7 days after the charge (30 in Japan).
//
// Implementations must be safe for concurrent use by multiple goroutines and,
// for stores shared by a fleet, by multiple processes. Every implementation
// should pass the conformance suite in package keystore/storetest.
type KeyStore interface {
	// Reserve inserts, claims or reads the record of (r.Namespace,
	// r.ID), in one atomic step, and returns it as stored after the
	// call with Now, the store's clock at that step:
	//
	//   - No record: it is inserted as attempt r.Attempt, open, with r's
	//     key and fingerprint, CreatedAt = UpdatedAt = Now, leased to
	//     r.Owner until Now + r.Lease, Creator r.Owner. Created and Claimed.
	//   - A failed record whose Attempt is r.Attempt-1: a new attempt
	//     begins. The failed attempt is appended to History, and the record
	//     becomes attempt r.Attempt with r's key and fingerprint, open,
	//     CreatedAt = UpdatedAt = Now, ClosedAt, ProviderRef and Result
	//     cleared, leased to r.Owner. Created and Claimed.
	//   - An open or pending record with r's fingerprint whose lease is
	//     free, held by r.Owner, or over (LeaseUntil at or before Now): the
	//     lease is taken for r.Owner until Now + r.Lease and UpdatedAt set
	//     to Now. Claimed. Renewing a lease is this case.
	//   - Anything else (a closed record, another fingerprint, a lease held
	//     by another owner): nothing changes; neither Created nor Claimed.
	//
	// Created is also reported when r.Owner is the record's Creator and
	// r.Key its key, so that a Reserve that a client library repeats after
	// losing the reply (go-redis re-runs a script) still tells the caller
	// that its key is new. The insert or claim is durable before Reserve
	// returns.
	Reserve(ctx context.Context, r ReserveRequest) (Reservation, error)

	// Resolve records what is known about the current attempt of an open
	// or pending intent and releases its lease. It changes nothing and
	// returns, checking in this order: ErrNotFound when there is no record,
	// ErrKeyMismatch when the stored key is not res.Key, ErrAlreadyResolved
	// when the record is already succeeded or failed, and ErrLeaseLost when
	// res.LeaseOwner is set and is not the record's current LeaseOwner. The
	// owner is checked in the same atomic step as the write, so a late
	// release by a flight whose lease was taken over never frees the new
	// holder's lease. UpdatedAt becomes the store's now, and so does
	// ClosedAt when res.State is succeeded or failed. With res.Durable the
	// write is durable before Resolve returns.
	Resolve(ctx context.Context, res Resolution) error

	// Load returns the record of an intent, or ErrNotFound.
	Load(ctx context.Context, namespace, intentID string) (Record, error)

	// ListOpen returns up to limit records of the namespace whose state is
	// StateOpen or StatePending, in (CreatedAt, ID) order, starting
	// strictly after the cursor (the zero Cursor is the start). Paging
	// with the cursor of the last record returned reaches every record
	// that stays open throughout, however many come before it. limit must
	// be positive.
	ListOpen(ctx context.Context, namespace string, after Cursor, limit int) ([]Record, error)

	// Expire deletes the succeeded and failed records of every namespace
	// that were closed more than retention ago by the store's clock, and
	// returns how many it deleted. Retention runs from ClosedAt, never from
	// CreatedAt: an intent that stayed open for a week and settled today
	// answers replays for the whole retention after today. A deleted
	// record's outcome lives on in its intent's ledger (see Retention
	// above): a paid intent charged again is answered from it; a failed
	// one is forgotten, and charging it again makes a new key. Open and
	// pending records are never deleted: they stand for money that may
	// have moved and must be settled first.
	Expire(ctx context.Context, retention time.Duration) (int, error)
}

// State is where an intent's current attempt stands in its KeyStore.
type State string

const (
	// StateOpen: the key is reserved and a charge may have been sent with
	// it; the outcome is not known.
	StateOpen State = "open"
	// StatePending: the provider accepted the charge but has not finished
	// it (3-D Secure, a hosted page, konbini). Money has not moved yet and
	// may still; the charge is settled by looking it up by ProviderRef.
	StatePending State = "pending"
	// StateSucceeded: the charge succeeded; Result holds it.
	StateSucceeded State = "succeeded"
	// StateFailed: the attempt definitely did not move money (a decline,
	// an invalid request, a provider never reached); Result holds why.
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

// Record is what a KeyStore keeps for one payment intent, one operation
// (a refund, capture or cancel), one intent's ledger, or one key of the
// guard or a webhook Deduper: whatever its Namespace says.
type Record struct {
	Namespace string // provider and account, e.g. "stripe:acct_123", and what the records are ("/refund", ...)
	// ID names the record in its namespace: the caller's intent ID for a
	// charge or a ledger, the caller's operation ID (RefundID, ...) for an
	// operation. Its JSON name (the admin API's) is "IntentID", as before.
	ID          string    `json:"IntentID"`
	Attempt     int       // the current attempt, 1 for the first
	Key         string    // the idempotency key of the current attempt
	Fingerprint string    // hash of the current attempt's parameters
	State       State     // open until the outcome is known
	CreatedAt   time.Time // when the current attempt's key was reserved (store clock)
	UpdatedAt   time.Time // last claim or Resolve (store clock)
	ClosedAt    time.Time // when the state became succeeded or failed (store clock); zero while unsettled
	Creator     string    // the owner whose Reserve made the current attempt
	LeaseOwner  string    // the flight that may send it now, if any
	LeaseUntil  time.Time // the lease is free from this instant on (store clock)
	ProviderRef string    // the provider's charge ID, once known
	Result      []byte    // the encoded outcome, for replay without a request
	History     []PastAttempt
}

// PastAttempt is an earlier attempt of an intent, kept in Record.History.
// Only failed attempts are ever followed by another, so its State is
// StateFailed.
type PastAttempt struct {
	Attempt     int       `json:"attempt"`
	Key         string    `json:"key"`
	Fingerprint string    `json:"fingerprint"`
	State       State     `json:"state"`
	CreatedAt   time.Time `json:"created_at"`
	ClosedAt    time.Time `json:"closed_at"`
	ProviderRef string    `json:"provider_ref,omitempty"`
	Result      []byte    `json:"result,omitempty"`
}

// Past returns r's current attempt as a PastAttempt, as Reserve appends it
// to History when a new attempt begins.
func (r Record) Past() PastAttempt {
	return PastAttempt{Attempt: r.Attempt, Key: r.Key, Fingerprint: r.Fingerprint, State: r.State,
		CreatedAt: r.CreatedAt, ClosedAt: r.ClosedAt, ProviderRef: r.ProviderRef, Result: r.Result}
}

// ClaimableBy reports whether a Reserve by owner with fingerprint fp at the
// store's instant now may take the lease of the stored record r: r is open
// or pending, carries fp, and its lease is free, held by owner already, or
// over (it is free from LeaseUntil on, so a crashed holder is replaced
// without waiting one more tick). Stores written in Go use it so that they
// all apply the one rule; stores in SQL or Lua state the same rule there,
// and storetest checks them all.
func (r Record) ClaimableBy(owner, fp string, now time.Time) bool {
	if r.State.Closed() || r.Fingerprint != fp {
		return false
	}
	return r.LeaseOwner == "" || r.LeaseOwner == owner || !now.Before(r.LeaseUntil)
}

// BeginsAttempt reports whether a Reserve of attempt n starts a new attempt
// over the stored record r: r is failed and n follows its attempt.
func (r Record) BeginsAttempt(n int) bool {
	return r.State == StateFailed && n == r.Attempt+1
}

// CreatedFor reports whether req made r's current attempt: the rule that
// keeps Created true for a Reserve repeated after a lost reply.
func (r Record) CreatedFor(req ReserveRequest) bool {
	return req.Owner != "" && r.Creator == req.Owner && r.Key == req.Key && r.Attempt == req.Attempt
}

// ReserveRequest is what KeyStore.Reserve is asked to insert or claim.
type ReserveRequest struct {
	Namespace   string
	ID          string
	Attempt     int           // 1 for a first attempt; the failed record's Attempt+1 for a new one
	Key         string        // the key of the attempt, if this call makes it
	Fingerprint string        // the parameters the caller will send
	Owner       string        // the flight asking for the lease; unique per flight
	Lease       time.Duration // how long the lease lasts from the store's now; positive
	// Unsent says that no key of this record is ever sent, and that its
	// writes matter only with a later write of the same caller (the
	// ledger's charge facts, before the charge's close; a caller key's
	// owner, before the reservation it is sent under). A store that
	// keeps its writes in order (WriteOrderKeeper) may then answer before
	// the insert or claim is durable: a crash can lose it only together
	// with that later write. Other stores ignore it.
	Unsent bool
}

// WriteOrderKeeper is implemented by a KeyStore whose crash loses at most
// a suffix of its writes, never one it kept a later write of the same
// process without (the file store: one process, one log). On such a store
// the Client lets the ledger's charge facts ride, unsynced, with the
// charge's own close, which their loss can only come with: the record then
// reopens, and the resumed charge writes them again from the replay.
type WriteOrderKeeper interface {
	// KeepsWriteOrder reports whether the store keeps that promise.
	KeepsWriteOrder() bool
}

// Reservation is the answer of KeyStore.Reserve.
type Reservation struct {
	Record  Record    // the record as stored after the call
	Created bool      // the call made the current attempt: its key is new
	Claimed bool      // the caller holds the lease and may send
	Now     time.Time // the store's clock at the call
	// Unproven: the store knows it lost writes it had acknowledged not
	// long ago (a Redis restarted without persistence, a failover that
	// dropped writes), so this record may stand for an intent whose
	// earlier record, and the key sent under it, was lost: Created does
	// not prove the key new. The Client then asks the provider (Finder)
	// before it sends anything under the reservation, and sends nothing
	// if it cannot ask. Stores that never lose an acknowledged write
	// leave it false.
	Unproven bool
}

// Cursor is a place in ListOpen's order: the CreatedAt and ID of the
// last record read. The zero Cursor is the start.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// CursorOf is the cursor just past r, to ask ListOpen for the next page.
func CursorOf(r Record) Cursor { return Cursor{CreatedAt: r.CreatedAt, ID: r.ID} }

// After reports whether r comes strictly after c in ListOpen's order.
func (c Cursor) After(r Record) bool {
	if d := r.CreatedAt.Compare(c.CreatedAt); d != 0 {
		return d > 0
	}
	return r.ID > c.ID
}

// Resolution is what KeyStore.Resolve writes.
type Resolution struct {
	Namespace   string
	ID          string
	Key         string // must equal the stored key
	State       State  // StateOpen only releases the lease
	ProviderRef string // kept unless empty
	Result      []byte // kept unless nil
	// LeaseOwner, when set, makes Resolve conditional on the lease: if the
	// record's current LeaseOwner is not LeaseOwner (another flight
	// claimed it after the lease ran out, or it was released), Resolve
	// changes nothing and returns ErrLeaseLost. Set it to release a lease
	// (State StateOpen), so that a slow flight cannot free the lease of
	// the one that took over. Empty skips the check: a known outcome is a
	// fact whoever holds the lease, and is recorded as one.
	LeaseOwner string
	// Durable makes Resolve return only once the write would survive a
	// crash of the store's server (PostgreSQL: a synchronous commit; Redis:
	// the AOF fsynced). The Claim sets it (ClaimConfig.DurableFor); a store
	// that cannot honour it must fail the write rather than pretend.
	Durable bool
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
	// record's lease (it ran out and another flight claimed it, or it was
	// released). Nothing was changed.
	ErrLeaseLost = errors.New("idempay: lease no longer held by this owner")
)

// CheckReserveRequest refuses a request no store should act on. Stores
// call it first, so that every store refuses the same requests.
func CheckReserveRequest(r ReserveRequest) error {
	switch {
	case r.Namespace == "" || r.ID == "":
		return errors.New("idempay: reserve: empty namespace or intent ID")
	case r.Attempt < 1:
		return errors.New("idempay: reserve: attempt must be 1 or more")
	case r.Key == "" || r.Owner == "" || r.Fingerprint == "":
		return errors.New("idempay: reserve: empty key, owner or fingerprint")
	case r.Lease <= 0:
		return errors.New("idempay: reserve: lease must be positive")
	}
	return nil
}
