package idempay

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Claim is a lease on one record of a KeyStore, held while work runs and
// given back exactly once: closed with the work's result, or released so
// that the next caller may try again. It is the one protocol the Client, the
// webhook Deduper and the server-side guard follow, the way database/sql's
// Tx owns Commit and Rollback over a driver's transaction:
//
//	reserve ─▶ work under Context() ─▶ Close(result) or Release()
//	              ▲ renewed every Lease/3 while the work runs
//
// The lease is renewed by a heartbeat, so a short lease costs nothing while
// the holder lives and a crash frees the record within one lease. If a
// renewal finds the lease lost (taken over after a pause longer than the
// lease, or the record closed by someone else), or the lease runs out on the
// holder's own clock before a renewal succeeds, Context is cancelled with
// ErrLeaseLost as its cause: work that sends must stop, because another
// flight may now be sending.
//
// Close and Release run on a context detached from the caller's (an outcome
// is recorded even when the caller has stopped waiting), bounded by
// ClaimConfig.WriteTimeout. Whether a close must be durable follows from
// the state it writes and the ClaimConfig (ClaimConfig.DurableFor), not
// from each call, so that no caller can forget it.
//
// A Claim is safe for concurrent use.
type Claim struct {
	cfg   ClaimConfig
	rec   Record
	owner string

	// The claim's context is made when first asked for (most ledger
	// claims never are): base until then, and the cause of an end that
	// came first.
	ctxMu  sync.Mutex
	base   context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	cause  error
	beat   sync.WaitGroup // a heartbeat beat in progress; finish waits for it
	timer  *time.Timer    // the heartbeat's next beat; set and reset under mu
	tickAt time.Time      // when the next renewal is due (wall clock, monotonic)

	req ReserveRequest // what a renewal sends

	mu       sync.Mutex
	deadline time.Time // on cfg.Clock: no work after it
	leaseEnd time.Time // on cfg.Clock: the lease may be another's from then on (deadline without MaxAge)
	agedAt   time.Time // on cfg.Clock: the attempt is older than MaxAge from then on (zero: not computed yet)
	stepped  bool      // the store's clock read below what it had read before: ages of existing attempts unknown
	lapsed   bool      // the lease may have been someone else's for a while
	finished bool
}

// ClaimConfig says how a Claim is taken and kept.
type ClaimConfig struct {
	// Store keeps the record. Required.
	Store KeyStore
	// Lease is how long each claim or renewal holds the record. Required,
	// at least MinLease; the heartbeat renews it every Lease/3.
	Lease time.Duration
	// MaxAge, if positive, ends the claim (as lost) once the current
	// attempt is older than MaxAge on the store's clock: the Client's
	// KeyRetention, past which a key is never resent.
	MaxAge time.Duration
	// Durable makes every close durable (Resolution.Durable), whatever its
	// state, and every ReleaseWith that stores a result: for callers whose
	// results nothing else could replay (a webhook handler's, a guarded
	// endpoint's, the ledger's). Without it a close is durable when its
	// state requires it (see DurableFor).
	Durable bool
	// WriteTimeout bounds Close, Release and each renewal. Default 5 s.
	WriteTimeout time.Duration
	// Instance prefixes every lease owner, to tell the holders apart in
	// the store. Default "idempay".
	Instance string
	// Clock measures elapsed time on the holder's side; it must not jump
	// back (time.Now does not: its readings carry the monotonic clock).
	// Default time.Now.
	Clock func() time.Time
	// Logger receives renewal failures at debug and warn level.
	Logger *slog.Logger

	// floor, when set (by the Client), is what the store's clock has been
	// seen to read: a reading below it makes existing records' ages
	// unknown (see storeFloor).
	floor *storeFloor
}

// DurableFor reports whether a Claim of cfg makes a close to state st
// durable before it returns: the one rule, applied from the state written
// so that no caller can forget it (ARCHITECTURE.md keeps the table).
//
//   - failed: always. A failure is told to a caller who acts on it (tries
//     another card, tells the customer); lost in a crash, the record
//     reopens with the attempt's key, which may never have reached the
//     provider, and resuming it would send that key for the first time
//     and move money the caller was told had not moved.
//   - succeeded, pending: only with cfg.Durable. Lost, the record reopens
//     with a key the provider has seen; resuming it sends the same key,
//     which the provider answers by replay (or, for a LookupBeforeResender
//     provider, a lookup before any resend), and past MaxAge it is never
//     resent at all.
//   - open (a release): never; see ReleaseWith for one that stores a
//     result under cfg.Durable.
func (cfg ClaimConfig) DurableFor(st State) bool {
	return cfg.Durable || st == StateFailed
}

// MinLease is the shortest lease a Claim accepts: a renewal must fit three
// times into it with room for a slow store.
const MinLease = 300 * time.Millisecond

// ErrLeaseLost is also the cause of a Claim's Context once its lease is
// lost; see KeyStore.Resolve for its meaning there.

// ErrClaimFinished is returned by Close or Release on a Claim already
// closed or released.
var ErrClaimFinished = errors.New("idempay: claim already closed or released")

// ErrClaimAged is the cause of a Claim's Context once its attempt is older
// than ClaimConfig.MaxAge: nothing more may be sent under it, though the
// lease is still held.
var ErrClaimAged = errors.New("idempay: claim's attempt older than its MaxAge")

// Reserve reserves req's record through cfg.Store and, if the caller got
// the lease, returns a Claim on it whose heartbeat has started; otherwise
// the Claim is nil and the Reservation says why (closed, other parameters,
// leased to another flight). req.Owner and req.Lease are filled in from cfg
// when empty. The Claim's Context derives from ctx's values but not from
// its cancellation: the work it guards outlives an impatient caller.
func (cfg ClaimConfig) Reserve(ctx context.Context, req ReserveRequest) (*Claim, Reservation, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, Reservation{}, err
	}
	if req.Owner == "" {
		req.Owner = cfg.NewOwner()
	}
	req.Lease = cfg.Lease
	start := cfg.Clock()
	res, err := cfg.Store.Reserve(ctx, req)
	if err != nil || !res.Claimed {
		return nil, res, err
	}
	cl := &Claim{cfg: cfg, rec: res.Record, owner: req.Owner, req: req,
		stepped: cfg.floor.observe(res.Now, start)}
	if ctx.Done() != nil { // a flight's context is detached already: not twice
		ctx = context.WithoutCancel(ctx)
	}
	cl.base = ctx
	cl.setDeadline(start, res)
	if cl.deadline.After(start) {
		cl.startHeartbeat(max(cl.until(), 0))
	} else {
		cl.age()
	}
	return cl, res, nil
}

// NewOwner makes a lease owner unique to one flight: the instance name and
// a random suffix. One owner per flight, never per process, because a store
// lets an owner re-claim its own lease.
func (cfg ClaimConfig) NewOwner() string {
	// 80 random bits as 16 characters of rand.Text's alphabet, built in
	// one allocation (every flight makes two owners).
	var raw [10]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand's promise)
	var enc [16]byte
	base32.StdEncoding.Encode(enc[:], raw[:])
	prefix := cmp.Or(cfg.Instance, "idempay")
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(enc))
	b.WriteString(prefix)
	b.WriteByte('/')
	b.Write(enc[:])
	return b.String()
}

func (cfg ClaimConfig) withDefaults() ClaimConfig {
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, 5*time.Second)
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

func (cfg ClaimConfig) check() error {
	switch {
	case isNil(cfg.Store):
		return configErr("Store", "is nil")
	case cfg.Lease < MinLease:
		return configErr("Lease", "%s is shorter than the minimum %s", cfg.Lease, MinLease)
	case cfg.MaxAge < 0:
		return configErr("MaxAge", "is negative")
	}
	return nil
}

// Record is the record as it was when the claim was taken or last renewed.
func (cl *Claim) Record() Record {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.rec
}

// Owner is the lease owner this claim holds the record as.
func (cl *Claim) Owner() string { return cl.owner }

// Context is cancelled, with cause ErrLeaseLost, once the lease is lost or
// has run out; with ErrClaimAged once the attempt is older than MaxAge; and
// when the claim is closed or released.
func (cl *Claim) Context() context.Context {
	cl.ctxMu.Lock()
	defer cl.ctxMu.Unlock()
	if cl.ctx == nil {
		cl.ctx, cl.cancel = context.WithCancelCause(cl.base)
		if cl.cause != nil {
			cl.cancel(cl.cause)
		}
	}
	return cl.ctx
}

// end cancels the claim's context with cause; the first cause stays.
func (cl *Claim) end(cause error) {
	cl.ctxMu.Lock()
	defer cl.ctxMu.Unlock()
	switch {
	case cl.ctx != nil:
		cl.cancel(cause)
	case cl.cause == nil:
		cl.cause = cause
	}
}

// ended reports whether the claim's context is (or, once made, will be)
// cancelled.
func (cl *Claim) ended() bool {
	cl.ctxMu.Lock()
	defer cl.ctxMu.Unlock()
	if cl.ctx != nil {
		return cl.ctx.Err() != nil
	}
	return cl.cause != nil
}

// Held reports whether the lease is still held with time left on the
// holder's clock: the check before every byte that may move money.
func (cl *Claim) Held() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return !cl.finished && !cl.ended() && cl.cfg.Clock().Before(cl.deadline)
}

// Lapsed reports whether the lease may have been another flight's at some
// point since it was taken: lost, run out, or renewed only after running
// out. Then "this flight made the key and nothing it sent arrived" no longer
// proves that nothing was charged.
func (cl *Claim) Lapsed() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	// A lease run out on the holder's clock has lapsed, whether or not the
	// heartbeat has noticed yet (it may not have run since: a pause).
	return cl.lapsed || !cl.cfg.Clock().Before(cl.leaseEnd)
}

// Close records the work's known outcome and gives the lease back. The
// outcome is a fact whoever holds the lease by now, so it names no owner;
// it is durable as ClaimConfig.DurableFor says for st.
func (cl *Claim) Close(ctx context.Context, st State, providerRef string, result []byte) error {
	if !cl.finish() {
		return ErrClaimFinished
	}
	return cl.write(ctx, Resolution{State: st, ProviderRef: providerRef, Result: result, Durable: cl.cfg.DurableFor(st)})
}

// CloseIfHeld closes like Close, but only while this claim holds the lease
// and never lost it: the store checks the owner in the same step as the
// write. It is for outcomes that rest on "nothing this flight sent arrived",
// which another holder's requests would make false. It returns ErrLeaseLost,
// and changes nothing, when the lease was lost or had lapsed.
func (cl *Claim) CloseIfHeld(ctx context.Context, st State, result []byte) error {
	if !cl.finish() {
		return ErrClaimFinished
	}
	if cl.Lapsed() {
		// Not this claim's to decide: give the lease back, if it still
		// is this claim's, for the flight that knows more.
		_ = cl.write(ctx, Resolution{State: StateOpen, LeaseOwner: cl.owner})
		return ErrLeaseLost
	}
	return cl.write(ctx, Resolution{State: st, Result: result, LeaseOwner: cl.owner, Durable: cl.cfg.DurableFor(st)})
}

// CloseAsOwner closes like Close, but only while the record's lease is
// still this claim's owner's in the store, checked in the same step as the
// write: for a result that the work of a holder who took the record over
// would contradict (a guarded handler's response after a pause longer than
// the lease, while a retry runs it again). Unlike CloseIfHeld, a lease that
// ran out without anyone taking it does not stop it. It returns
// ErrLeaseLost, changing nothing, when another owner holds the record or it
// was released.
func (cl *Claim) CloseAsOwner(ctx context.Context, st State, result []byte) error {
	if !cl.finish() {
		return ErrClaimFinished
	}
	return cl.write(ctx, Resolution{State: st, Result: result, LeaseOwner: cl.owner, Durable: cl.cfg.DurableFor(st)})
}

// Release gives the lease back and leaves the record unsettled, for the
// next caller to try again. It names this claim's owner, so after a
// takeover it changes nothing and returns ErrLeaseLost: the lease was no
// longer this claim's to give back.
func (cl *Claim) Release(ctx context.Context) error {
	return cl.ReleaseWith(ctx, nil)
}

// ReleaseWith releases the lease like Release and, if result is not nil,
// stores it with the unsettled record (a pending charge's latest state, a
// guarded endpoint's "do not run again" lock). Under ClaimConfig.Durable a
// release that stores a result is durable before it returns: a caller that
// stores something with an open record means the next holder to read it.
func (cl *Claim) ReleaseWith(ctx context.Context, result []byte) error {
	if !cl.finish() {
		return ErrClaimFinished
	}
	return cl.write(ctx, Resolution{State: StateOpen, Result: result, LeaseOwner: cl.owner,
		Durable: cl.cfg.Durable && result != nil})
}

// releaseIfUnchanged releases the lease storing result, as ReleaseWith
// does, but only if the lease held throughout and the record's Result is
// still read, the one the work started from. A renewal sent in time but
// applied late, after another flight had taken the record over, written it
// and let it go, hands the free lease back with the record changed under
// it: the owner check alone would then let a stale result overwrite the
// other flight's. The heartbeat is stopped before the check, so no renewal
// can follow it. It returns ErrLeaseLost, writing nothing, otherwise.
func (cl *Claim) releaseIfUnchanged(ctx context.Context, result, read []byte) error {
	if !cl.finish() {
		return ErrClaimFinished
	}
	if cl.Lapsed() || !bytes.Equal(cl.Record().Result, read) {
		return ErrLeaseLost
	}
	return cl.write(ctx, Resolution{State: StateOpen, Result: result, LeaseOwner: cl.owner,
		Durable: cl.cfg.Durable && result != nil})
}

// abandonUnfinished gives the lease back if the claim was neither closed
// nor released yet: deferred by work that may panic.
func (cl *Claim) abandonUnfinished() {
	cl.mu.Lock()
	done := cl.finished
	cl.mu.Unlock()
	if !done {
		_ = cl.abandon(context.Background())
	}
}

// abandon gives the lease back whatever state the claim is in: for work
// that panicked, perhaps inside Close itself. The owner check keeps it
// harmless after a takeover.
func (cl *Claim) abandon(ctx context.Context) error {
	cl.finish()
	return cl.write(ctx, Resolution{State: StateOpen, LeaseOwner: cl.owner})
}

// finish stops the heartbeat, once; it reports whether this call did.
func (cl *Claim) finish() bool {
	cl.mu.Lock()
	if cl.finished {
		cl.mu.Unlock()
		return false
	}
	cl.finished = true
	cl.mu.Unlock()
	// Cancelled first, so that a renewal on the wire gives up at once
	// instead of delaying the close by up to a third of the lease.
	cl.end(ErrClaimFinished)
	cl.mu.Lock()
	t := cl.timer
	cl.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	cl.beat.Wait()
	return true
}

func (cl *Claim) write(ctx context.Context, res Resolution) error {
	wctx := detachedWrite(ctx, cl.cfg.WriteTimeout)
	defer wctx.cancel()
	rec := cl.Record()
	res.Namespace, res.ID, res.Key = rec.Namespace, rec.ID, rec.Key
	return cl.cfg.Store.Resolve(wctx, res)
}

// The heartbeat renews the lease every Lease/3 until the claim finishes or
// the lease is lost. A renewal that fails for a store error is tried again
// at the next beat; once the deadline passes without one, the lease is lost.
//
// It runs on one timer, not on a goroutine of its own: a flight that ends
// within a third of its lease (nearly all of them) never starts a goroutine
// or wakes one to stop it. Beats never overlap: the timer is set again only
// when a beat has ended, and finish waits for the beat in progress.

// startHeartbeat arms the first beat. The timers start now, with what the
// lease has left as it was granted (not when a goroutine first runs, which
// the scheduler decides): the lease runs out as the clock says, and Held
// and Lapsed say so.
func (cl *Claim) startHeartbeat(left time.Duration) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.tickAt = time.Now().Add(cl.cfg.Lease / 3)
	cl.timer = time.AfterFunc(min(cl.cfg.Lease/3, left), cl.beatOnce)
}

// beatOnce is one firing of the heartbeat's timer: a renewal when one is
// due, else the lease ran out before it could be renewed.
func (cl *Claim) beatOnce() {
	cl.mu.Lock()
	if cl.finished {
		cl.mu.Unlock()
		return
	}
	cl.beat.Add(1) // under mu, before finished is set: finish waits for it
	cl.mu.Unlock()
	defer cl.beat.Done()
	defer func() {
		// A store or clock that panics here must not kill the process:
		// the lease is lost, and the work stops.
		if v := recover(); v != nil {
			cl.lose(fmt.Errorf("%w: renewal panicked: %v", ErrLeaseLost, v))
		}
	}()
	now := time.Now()
	if now.Before(cl.tickAt) {
		cl.lose(fmt.Errorf("%w: lease ran out before it could be renewed", ErrLeaseLost))
		return
	}
	// As a time.Ticker does, beats missed while a renewal ran are dropped.
	period := cl.cfg.Lease / 3
	for !now.Before(cl.tickAt) {
		cl.tickAt = cl.tickAt.Add(period)
	}
	if !cl.renew() {
		return
	}
	left := max(cl.until(), 0)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.finished {
		cl.timer.Reset(min(time.Until(cl.tickAt), left))
	}
}

// until is how long the lease has left on the holder's clock.
func (cl *Claim) until() time.Duration {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.deadline.Sub(cl.cfg.Clock())
}

// Renew claims the record again now, as the heartbeat does, and reports
// whether the lease is still held. Work about to repeat an action calls it
// first: the heartbeat beats every Lease/3, and in between someone may have
// closed the record (a Settle that learnt the outcome) and freed the lease.
// A store error leaves the lease as it was: held until it runs out.
func (cl *Claim) Renew() bool {
	if !cl.Held() {
		return false
	}
	cl.renew()
	return cl.Held()
}

// renew claims the record again as the same owner; it reports whether the
// heartbeat should go on.
func (cl *Claim) renew() bool {
	req := cl.req
	start := cl.cfg.Clock()
	ctx, cancel := context.WithTimeout(cl.Context(), min(cl.cfg.WriteTimeout, cl.cfg.Lease/3))
	res, err := cl.cfg.Store.Reserve(ctx, req)
	cancel()
	switch {
	case err != nil:
		cl.cfg.Logger.LogAttrs(context.Background(), slog.LevelDebug, "idempay: lease renewal failed; trying again",
			slog.String("intent", req.ID), slog.String("error", err.Error()))
		return true
	case !res.Claimed:
		cl.lose(fmt.Errorf("%w: renewal refused (record %s, leased to another flight: %t)",
			ErrLeaseLost, res.Record.State, res.Record.LeaseOwner != "" && res.Record.LeaseOwner != req.Owner))
		return false
	}
	cl.mu.Lock()
	if !cl.cfg.Clock().Before(cl.deadline) {
		// Renewed, but the answer came only after the lease had run out:
		// the store may have applied it after another flight took the
		// record over (and perhaps let it go again), so the lease may
		// have been someone else's for a while.
		cl.lapsed = true
	}
	cl.rec = res.Record
	if cl.cfg.floor.observe(res.Now, start) {
		cl.stepped = true
	}
	cl.mu.Unlock()
	cl.setDeadline(start, res)
	if cl.until() <= 0 { // renewed, but the attempt is past MaxAge now
		cl.age()
		return false
	}
	return true
}

// setDeadline computes, on the holder's clock, when the lease granted by
// res runs out. start was read before the Reserve was sent, and the store
// stamped the lease no earlier, so start+Lease is never later than the
// store's LeaseUntil. MaxAge shortens it the same way.
//
// The time left by MaxAge never grows from one renewal to the next: a store
// clock that stepped back since the last one must not make the attempt
// younger. An attempt whose age cannot be told (attemptAge) is aged at
// once.
func (cl *Claim) setDeadline(start time.Time, res Reservation) {
	end := start.Add(cl.cfg.Lease)
	d := end
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.cfg.MaxAge > 0 {
		aged := start
		if age, ok := cl.attemptAgeLocked(res); ok {
			aged = start.Add(cl.cfg.MaxAge - age)
		}
		if !cl.agedAt.IsZero() {
			aged = minTime(aged, cl.agedAt)
		}
		cl.agedAt = aged
		d = minTime(d, aged)
	}
	cl.deadline, cl.leaseEnd = d, end
}

// attemptAge is how old the current attempt of res's record is, on the
// store's clock. ok is false when the store's Now is before the record's
// CreatedAt: the store's clock stepped back since it stamped the record
// (NTP, a VM migration, a failover to another host), so the attempt may be
// of any age, past any retention. Such a key is never resent; it is settled
// by lookup, like one past retention.
func attemptAge(res Reservation) (time.Duration, bool) {
	age := res.Now.Sub(res.Record.CreatedAt)
	return age, age >= 0
}

// attemptAge is attemptAge(res) as this claim can trust it: unknown, too,
// for an attempt it did not create once the store's clock has been seen to
// step back (storeFloor), since the age then reads on the stepped clock.
func (cl *Claim) attemptAge(res Reservation) (time.Duration, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.attemptAgeLocked(res)
}

func (cl *Claim) attemptAgeLocked(res Reservation) (time.Duration, bool) {
	age, ok := attemptAge(res)
	return age, ok && (res.Created || !cl.stepped)
}

// age ends the work of a claim whose attempt has grown older than MaxAge:
// nothing more may be sent, but the lease is still this claim's alone (no
// other flight took it), so it may still close or release.
func (cl *Claim) age() {
	cl.end(fmt.Errorf("%w: attempt older than %s", ErrClaimAged, cl.cfg.MaxAge))
}

func (cl *Claim) lose(cause error) {
	cl.mu.Lock()
	cl.lapsed = true
	cl.mu.Unlock()
	cl.end(cause)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
