package filestore

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
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
// Every Resolve is durable when it returns, whether or not res.Durable asks
// for it: bbolt fsyncs every commit and cannot leave out one transaction's
// sync. Resolve shares commits with concurrent Reserve and Resolve calls,
// which makes the sync nearly free under load.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("filestore: resolve %q/%q: invalid state %q", res.Namespace, res.IntentID, res.State)
	}
	k := recordKey(res.Namespace, res.IntentID)
	var refused error
	err := s.write(func(tx *bolt.Tx) (err error) {
		// A refusal is not returned to Batch: an error makes bbolt
		// roll back and rerun the whole batch without this call, so
		// every refusal would cost the other callers a commit.
		refused, err = s.resolve(tx, k, res)
		return err
	})
	if err == nil {
		err = refused
	}
	return wrapErr("resolve", res.Namespace, res.IntentID, err)
}

// resolve is Resolve's write transaction. It returns the contract's
// refusal, if any, apart from the errors that must roll it back.
func (s *Store) resolve(tx *bolt.Tx, k []byte, res idempay.Resolution) (refused, err error) {
	recs := tx.Bucket(bucketRecords)
	v := recs.Get(k)
	if v == nil {
		return idempay.ErrNotFound, nil
	}
	cur, err := decodeRecord(res.Namespace, res.IntentID, v)
	if err != nil {
		return nil, err
	}
	switch {
	case cur.Key != res.Key:
		return idempay.ErrKeyMismatch, nil
	case cur.State.Closed():
		return idempay.ErrAlreadyResolved, nil
	case res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner:
		return idempay.ErrLeaseLost, nil
	}
	next := settle(cur, res, s.now())
	if err := recs.Put(k, encodeRecord(next)); err != nil {
		return nil, err
	}
	return nil, reindex(tx, cur, next, true)
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
