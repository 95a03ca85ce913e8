package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// NamespacePrefix starts every namespace a Deduper writes, so that event
// IDs never share a namespace with charge intents in the same KeyStore.
const NamespacePrefix = "webhook:"

// recordTimeout bounds the store write after a handler returns. It runs on
// a context detached from the request's (the Claim sees to it): a provider
// that stops waiting must not keep us from recording work that was done.
const recordTimeout = 10 * time.Second

// Delivery says what Deduper.Do did with one delivery of an event.
type Delivery int

const (
	// Handled: this delivery ran the handler and it succeeded.
	Handled Delivery = iota + 1
	// Duplicate: an earlier delivery of the event was handled (or the
	// record was closed by hand, as failed, to drop a poison event); the
	// handler did not run.
	Duplicate
)

// String returns "handled", "duplicate", or "none" for the zero value.
func (d Delivery) String() string {
	switch d {
	case Handled:
		return "handled"
	case Duplicate:
		return "duplicate"
	}
	return "none"
}

// Deduper runs a handler once per event over a provider's at-least-once
// delivery, using any idempay.KeyStore: the record of an event is keyed by
// its ID in the namespace NamespacePrefix + provider + ":" + account.
//
// Each delivery reserves the record with a lease before the handler runs,
// so a concurrent delivery (here or on any instance sharing the store)
// gets ErrInProgress instead of running it a second time. Success closes
// the record as succeeded, and every later delivery is a Duplicate. A
// handler error, a panic or runtime.Goexit releases the lease at once, so
// the provider's next delivery runs the handler again: a failed handler
// never leaves the event locked. A process that dies mid-handler leaves
// the lease, which runs out after the lease duration.
//
// Records of handled events are closed and are deleted by the store's
// Expire like settled charges: keep them longer than the provider may
// redeliver or anyone may resend an event by hand, or a late copy runs the
// handler again. Records of events whose handler failed and never
// succeeded stay open, are never expired, and are listed by the store's
// ListOpen for the namespace: a dead-letter list.
//
// A Deduper is safe for concurrent use. The zero value is not usable; use
// NewDeduper.
type Deduper struct {
	store  idempay.KeyStore
	ns     string
	cfg    deduperConfig
	claims idempay.ClaimConfig
}

// NewDeduper returns a Deduper keeping its records in store, in the
// namespace NamespacePrefix + provider + ":" + account. provider is a
// short lower-case name ("stripe", "omise"); account tells apart the
// accounts or endpoints sharing one store ("acct_123"), so that one
// tenant's event can never be taken for another's. It is refused if store
// is nil, provider is not 1 to 32 characters of [a-z0-9_-], or account is
// empty, longer than 200 bytes or not printable ASCII. Options: WithLease,
// WithClock, WithInstance, WithFingerprint.
func NewDeduper(store idempay.KeyStore, provider, account string, opts ...DeduperOption) (*Deduper, error) {
	if store == nil {
		return nil, errors.New("webhook: NewDeduper: nil KeyStore")
	}
	if !providerName(provider) {
		return nil, fmt.Errorf("webhook: NewDeduper: provider %q must be 1 to 32 characters of [a-z0-9_-]", provider)
	}
	if account == "" || len(account) > 200 || !printable(account) {
		return nil, errors.New("webhook: NewDeduper: account must be 1 to 200 printable ASCII characters")
	}
	cfg, err := newDeduperConfig(opts)
	if err != nil {
		return nil, err
	}
	// A handled event must stay handled whatever happens to the store's
	// server next: the close is durable.
	claims := idempay.ClaimConfig{Store: store, Lease: cfg.lease, Durable: true,
		WriteTimeout: recordTimeout, Instance: cfg.instance, Clock: cfg.now}
	return &Deduper{store: store, ns: NamespacePrefix + provider + ":" + account, cfg: cfg, claims: claims}, nil
}

// providerName keeps the provider free of ':', so that the namespace
// splits back into provider and account one way only.
func providerName(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	for _, c := range []byte(p) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Namespace returns the KeyStore namespace of the Deduper's records, for
// the store's Load and ListOpen.
func (d *Deduper) Namespace() string { return d.ns }

// Do runs fn for the event eventID unless another delivery has handled it
// or is handling it. body is the delivery's raw body; its fingerprint
// (EventFingerprint unless WithFingerprint) is kept with the record and
// compared on every later delivery of an event not yet handled.
//
// It returns:
//   - Handled, nil: fn ran and succeeded, and the record says so, durably.
//   - Duplicate, nil: the event was handled before, whatever this
//     delivery's body; fn did not run. Answer 2xx so that the provider
//     stops delivering it.
//   - an error matching ErrInProgress: another delivery holds the lease;
//     fn did not run. It also matches idempay.ErrLeaseLost when this
//     delivery got the lease but it ran out before fn could start (the
//     store answered late): fn runs only while the lease is held.
//   - a *HandlerError: fn failed; the lease was released.
//   - Handled and an error matching ErrNotRecorded: fn succeeded but the
//     store did not record it (see ErrNotRecorded).
//   - an error matching ErrEventMismatch: the event is not handled yet
//     and was first seen with other data; fn did not run and the record
//     is unchanged (no lease was taken).
//   - an error matching ErrNoEventID: eventID is unusable.
//   - another error: the store failed before fn could run.
//
// fn's context is ctx, ended early if the lease is lost (it is renewed
// while fn runs, so only a delivery cut off from the store loses it).
func (d *Deduper) Do(ctx context.Context, eventID string, body []byte, fn func(context.Context) error) (Delivery, error) {
	if err := checkEventID(eventID); err != nil {
		return 0, err
	}
	if fn == nil {
		return 0, errors.New("webhook: Deduper.Do: nil handler")
	}
	fp := d.cfg.fingerprint(body)
	// Each delivery is its own lease owner (ClaimConfig.Reserve makes one):
	// the store lets an owner re-claim its own lease, so one owner for the
	// whole process would let two concurrent deliveries both run fn.
	claim, res, err := d.claims.Reserve(ctx, idempay.ReserveRequest{
		Namespace: d.ns, ID: eventID, Attempt: 1, Key: eventID, Fingerprint: fp,
	})
	if err != nil {
		return 0, fmt.Errorf("webhook: reserve event %s: %w", eventID, err)
	}
	rec := res.Record
	switch {
	case rec.State.Closed():
		// Handled before (Reserve never claims a closed record): whatever
		// this delivery's body, the event is done and the provider should
		// stop sending it.
		return Duplicate, nil
	case rec.Fingerprint != fp:
		return 0, fmt.Errorf("%w: %s", ErrEventMismatch, eventID)
	case claim == nil:
		return 0, fmt.Errorf("%w: event %s is leased until %s", ErrInProgress, eventID, rec.LeaseUntil.UTC().Format(time.RFC3339))
	}
	if err := d.run(ctx, claim, fn); err != nil {
		return 0, err
	}
	if err := claim.Close(ctx, idempay.StateSucceeded, "", nil); err != nil {
		return Handled, fmt.Errorf("%w: event %s: %w", ErrNotRecorded, eventID, err)
	}
	return Handled, nil
}

// run calls fn under the claim. On an error it releases the lease so the
// next delivery runs fn again. If fn panics or calls runtime.Goexit the
// lease is released too and the panic goes on: a panic is a failed
// handler, not a reason to lock the event until the lease runs out.
func (d *Deduper) run(ctx context.Context, claim *idempay.Claim, fn func(context.Context) error) error {
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(claim.Context(), func() { cancel(context.Cause(claim.Context())) })
	defer stop()
	returned := false
	defer func() {
		if !returned {
			_ = d.release(ctx, claim) // best effort; else the lease runs out
		}
	}()
	if !claim.Held() {
		// The lease ran out before the handler could start (the store's
		// answer came late, or this goroutine was paused): another
		// delivery may hold it now and be running fn. Run nothing.
		returned = true
		_ = d.release(ctx, claim)
		return fmt.Errorf("%w: event %s: the lease ran out before the handler started: %w",
			ErrInProgress, claim.Record().ID, idempay.ErrLeaseLost)
	}
	err := fn(hctx)
	returned = true
	if err == nil {
		return nil
	}
	id := claim.Record().ID
	herr := &HandlerError{EventID: id, Err: err}
	if rerr := d.release(ctx, claim); rerr != nil {
		return errors.Join(herr, fmt.Errorf("webhook: release event %s: %w", id, rerr))
	}
	return herr
}

// release gives back the lease so the next delivery need not wait for it.
// The store refuses it (ErrLeaseLost) when the lease ran out and another
// delivery took it since: that delivery keeps its lease, and there was
// nothing left to release.
func (d *Deduper) release(ctx context.Context, claim *idempay.Claim) error {
	err := claim.Release(ctx)
	if errors.Is(err, idempay.ErrLeaseLost) {
		return nil
	}
	return err
}
