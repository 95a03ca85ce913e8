package filestore

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// Reserve stores r if the intent has no record, or else returns the stored
// record and takes its lease for r.LeaseOwner when the record is not closed
// and its lease is free, expired at r.UpdatedAt or already held by
// r.LeaseOwner. A pending record can be claimed like an open one: its charge
// still has to be settled, and the lease keeps two instances from settling
// it at once.
//
// An insert or a claim is committed and fsynced before Reserve returns;
// concurrent calls share the commit. A call that only reads (the record is
// closed or leased to another owner) commits nothing. Reserve returns an
// error if ctx is already done or r.State is not a valid state; a call that
// has joined a batch is not abandoned when ctx ends during the wait.
func (s *Store) Reserve(ctx context.Context, r idempay.Record) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if !r.State.Valid() {
		return idempay.Reservation{}, fmt.Errorf("filestore: reserve %q/%q: invalid state %q", r.Namespace, r.IntentID, r.State)
	}
	k := recordKey(r.Namespace, r.IntentID)

	// A read-only transaction first: a Reserve that changes nothing
	// (a replay of a closed intent, a losing contender) need not wait
	// for a batch and an fsync. If the answer could be a write, the
	// batch below decides again under the write lock.
	var res idempay.Reservation
	done := false
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(k)
		if v == nil {
			return nil
		}
		cur, err := decodeRecord(r.Namespace, r.IntentID, v)
		if err != nil {
			return err
		}
		if !cur.ClaimableBy(r.LeaseOwner, r.UpdatedAt) {
			res, done = idempay.Reservation{Record: cur}, true
		}
		return nil
	})
	if err != nil || done {
		return res, wrapErr("reserve", r.Namespace, r.IntentID, err)
	}

	// Encoded once, outside the batch, so the shared commit holds the
	// write lock for as short a time as possible.
	created := encodeRecord(r)
	err = s.write(func(tx *bolt.Tx) error {
		// Batch may run this function more than once (when another
		// function of the batch fails, the batch is retried without
		// it), so it computes res from tx alone and assigns it whole.
		recs := tx.Bucket(bucketRecords)
		v := recs.Get(k)
		if v == nil {
			if err := recs.Put(k, created); err != nil {
				return err
			}
			if err := index(tx, r); err != nil {
				return err
			}
			res = idempay.Reservation{Record: clone(r), Created: true, Claimed: true}
			return nil
		}
		cur, err := decodeRecord(r.Namespace, r.IntentID, v)
		if err != nil {
			return err
		}
		if !cur.ClaimableBy(r.LeaseOwner, r.UpdatedAt) {
			res = idempay.Reservation{Record: cur}
			return nil
		}
		cur.LeaseOwner, cur.LeaseUntil, cur.UpdatedAt = r.LeaseOwner, r.LeaseUntil, r.UpdatedAt
		if err := recs.Put(k, encodeRecord(cur)); err != nil {
			return err
		}
		res = idempay.Reservation{Record: cur, Claimed: true}
		return nil
	})
	if err != nil {
		return idempay.Reservation{}, wrapErr("reserve", r.Namespace, r.IntentID, err)
	}
	return res, nil
}

// write runs fn in a write transaction that concurrent writers share.
//
// A writer alone commits at once with db.Update. Only when other writes are
// in flight does it go through db.Batch, whose first caller waits up to
// MaxBatchDelay for others to join. Go timers shorter than a millisecond
// sleep a whole millisecond when the process is otherwise idle (the
// runtime's epoll wait has millisecond resolution), so without this bypass
// every write of a lone caller would pay about 1 ms on top of a 0.2 ms
// commit. fn must be safe to run more than once (see Reserve).
func (s *Store) write(fn func(*bolt.Tx) error) error {
	if s.writers.Add(1) == 1 && !s.cfg.alwaysBatch {
		defer s.writers.Add(-1)
		return s.db.Update(fn)
	}
	defer s.writers.Add(-1)
	return s.db.Batch(fn)
}

// index adds the index entry of a new record r: open or closed by state.
func index(tx *bolt.Tx, r idempay.Record) error {
	if r.State.Closed() {
		return tx.Bucket(bucketClosed).Put(closedKey(r.CreatedAt, r.Namespace, r.IntentID), nil)
	}
	return tx.Bucket(bucketOpen).Put(openKey(r.Namespace, r.CreatedAt, r.IntentID), nil)
}

// Resolve applies res to the stored record and releases its lease. It
// returns an error matching idempay.ErrNotFound, idempay.ErrKeyMismatch,
// idempay.ErrAlreadyResolved or (when res.LeaseOwner is set and does not
// hold the lease) idempay.ErrLeaseLost as the KeyStore contract says, and
// changes nothing in those cases. The checks and the write happen in one
// write transaction. With res.State StateOpen the state is kept (an
// open record stays open, a pending one pending).
//
// Resolve shares commits with concurrent Reserve and Resolve calls. It is
// fsynced like them, although the contract does not require it: bbolt
// cannot skip the sync of one transaction alone, and sharing the commit
// makes the sync nearly free under load.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("filestore: resolve %q/%q: invalid state %q", res.Namespace, res.IntentID, res.State)
	}
	k := recordKey(res.Namespace, res.IntentID)
	var refused error
	err := s.write(func(tx *bolt.Tx) error {
		// A refusal is not returned to Batch: an error makes bbolt
		// roll back and rerun the whole batch without this call, so
		// every refusal would cost the other callers a commit.
		refused = nil
		recs := tx.Bucket(bucketRecords)
		v := recs.Get(k)
		if v == nil {
			refused = idempay.ErrNotFound
			return nil
		}
		cur, err := decodeRecord(res.Namespace, res.IntentID, v)
		if err != nil {
			return err
		}
		switch {
		case cur.Key != res.Key:
			refused = idempay.ErrKeyMismatch
			return nil
		case cur.State.Closed():
			refused = idempay.ErrAlreadyResolved
			return nil
		case res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner:
			refused = idempay.ErrLeaseLost
			return nil
		}
		next := cur
		if res.State != idempay.StateOpen {
			next.State = res.State
		}
		if res.ProviderRef != "" {
			next.ProviderRef = res.ProviderRef
		}
		if res.Result != nil {
			next.Result = res.Result // encoded (copied) below, not kept
		}
		next.UpdatedAt = res.At
		next.LeaseOwner, next.LeaseUntil = "", time.Time{}
		if err := recs.Put(k, encodeRecord(next)); err != nil {
			return err
		}
		if next.State.Closed() {
			if err := tx.Bucket(bucketOpen).Delete(openKey(cur.Namespace, cur.CreatedAt, cur.IntentID)); err != nil {
				return err
			}
			return index(tx, next)
		}
		return nil
	})
	if err == nil {
		err = refused
	}
	return wrapErr("resolve", res.Namespace, res.IntentID, err)
}

// Load returns the record of the intent, or an error matching
// idempay.ErrNotFound. Times come back in UTC.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	var r idempay.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(recordKey(namespace, intentID))
		if v == nil {
			return idempay.ErrNotFound
		}
		var err error
		r, err = decodeRecord(namespace, intentID, v)
		return err
	})
	return r, wrapErr("load", namespace, intentID, err)
}

// ListOpen returns up to limit open and pending records of the namespace,
// oldest CreatedAt first (ties by intent ID). A limit of zero or less means
// no limit. It reads the index of open records, so closed records, however
// many, cost it nothing.
func (s *Store) ListOpen(ctx context.Context, namespace string, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []idempay.Record
	prefix := nsPrefix(namespace)
	err := s.db.View(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecords)
		c := tx.Bucket(bucketOpen).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if limit > 0 && len(out) == limit {
				break
			}
			if len(k) < len(prefix)+timeKeyLen {
				return fmt.Errorf("%w: bad open index key %q", ErrCorrupt, k)
			}
			id := string(k[len(prefix)+timeKeyLen:])
			v := recs.Get(recordKey(namespace, id))
			if v == nil {
				return fmt.Errorf("%w: open index names missing record %q/%q", ErrCorrupt, namespace, id)
			}
			r, err := decodeRecord(namespace, id, v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("filestore: list open %q: %w", namespace, err)
	}
	return out, nil
}

// wrapErr adds the operation and intent to err, keeping it matchable with
// errors.Is; nil stays nil.
func wrapErr(op, ns, id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("filestore: %s %q/%q: %w", op, ns, id, err)
}

// clone returns r with its own copy of Result, so that the record returned
// by Reserve does not alias the caller's slice.
func clone(r idempay.Record) idempay.Record {
	r.Result = bytes.Clone(r.Result)
	return r
}
