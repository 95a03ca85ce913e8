package filestore

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
)

// Resolve implements idempay.KeyStore: it applies res to the stored record
// and releases its lease. It returns an error matching idempay.ErrNotFound,
// idempay.ErrKeyMismatch, idempay.ErrAlreadyResolved or (when res.LeaseOwner
// is set and does not hold the lease) idempay.ErrLeaseLost as the contract
// says, and changes nothing in those cases. The checks and the write happen
// in one write transaction, stamped from the store's clock: UpdatedAt, and
// ClosedAt when the record closes. With res.State StateOpen the state is
// kept (an open record stays open, a pending one pending).
//
// A Resolve with res.Durable, or that closes the record failed or makes it
// pending, is committed and fsynced before it returns, sharing the commit
// with concurrent writes. Any other (a success, a release) returns at once
// and rides on the next commit, at the latest after the batch delay (see
// durableResolve).
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("filestore: resolve %q/%q: invalid state %q", res.Namespace, res.ID, res.State)
	}
	return wrapErr("resolve", res.Namespace, res.ID, s.resolve(recordKey(res.Namespace, res.ID), res))
}

// resolve is Resolve on the records in memory (see writes): it returns
// the contract's refusal, if any, once what it was judged on is committed.
func (s *Store) resolve(k []byte, res idempay.Resolution) error {
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return errClosed
	}
	cur, exists, seen, err := s.current(k, res.Namespace, res.ID)
	if err != nil {
		return err
	}
	var refused error
	switch {
	case !exists:
		refused = idempay.ErrNotFound
	case cur.Key != res.Key:
		refused = idempay.ErrKeyMismatch
	case cur.State.Closed():
		refused = idempay.ErrAlreadyResolved
	case res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner:
		refused = idempay.ErrLeaseLost
	}
	if refused != nil {
		if err := s.wait(seen); err != nil {
			return err
		}
		return refused
	}
	next := settle(cur, res, s.now())
	durable := durableResolve(res, next)
	seq := s.put(k, next, durable)
	if !durable {
		return nil
	}
	return s.wait(seq)
}

// durableResolve says whether Resolve must wait for res to be fsynced:
// when asked (a result nothing else could replay), and for a failure or a
// pending charge, whose loss would reopen the intent as open: a key never
// sent could then be sent for the first time to a customer told "failed".
// A success may be lost: the intent reopens, and resending its key is
// answered by the provider's replay. A release (StateOpen) may be lost: it
// only frees a lease, which the next Open voids anyway.
func durableResolve(res idempay.Resolution, next idempay.Record) bool {
	return res.Durable || next.State == idempay.StateFailed || next.State == idempay.StatePending
}

// settle is cur after res at the instant now, its lease released.
func settle(cur idempay.Record, res idempay.Resolution, now time.Time) idempay.Record {
	next := cur
	if res.State != idempay.StateOpen {
		next.State = res.State
	}
	if next.State.Closed() {
		next.ClosedAt = now
	}
	if res.ProviderRef != "" {
		next.ProviderRef = res.ProviderRef
	}
	if res.Result != nil {
		next.Result = res.Result // encoded (copied) by the caller, not kept
	}
	next.UpdatedAt = now
	next.LeaseOwner, next.LeaseUntil = "", time.Time{}
	return next
}
