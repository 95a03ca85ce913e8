package filestore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// Reserve implements idempay.KeyStore: it inserts, begins a new attempt,
// claims or reads the record, as the contract says, stamped from the
// store's clock.
//
// An insert, a new attempt or a claim by a new owner is committed and
// fsynced before Reserve returns (unless r.Unsent: see KeepsWriteOrder);
// concurrent calls share the commit. A
// renewal (a claim by the owner that holds the lease) is not waited for:
// it rides on the next commit, and if a crash loses it, the next Open voids
// the lease anyway. A call that only reads (the record is closed, has
// another fingerprint or is leased to another owner) commits nothing, but
// waits for the commit of what it read if that is not in the file yet. It
// returns an error if ctx is already done or the request is invalid; a
// call that has begun is not abandoned when ctx ends during the wait.
func (s *Store) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if err := idempay.CheckReserveRequest(r); err != nil {
		return idempay.Reservation{}, fmt.Errorf("filestore: %w", err)
	}
	res, err := s.reserve(recordKey(r.Namespace, r.ID), r)
	if err != nil {
		return idempay.Reservation{}, wrapErr("reserve", r.Namespace, r.ID, err)
	}
	return res, nil
}

// reserve is Reserve on the records in memory (see writes).
func (s *Store) reserve(k []byte, r idempay.ReserveRequest) (idempay.Reservation, error) {
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return idempay.Reservation{}, errClosed
	}
	cur, exists, seen, err := s.current(k, r.Namespace, r.ID)
	if err != nil {
		return idempay.Reservation{}, err
	}
	now := s.now()
	// Unsent writes need no sync of their own: this store keeps its
	// writes in order (KeepsWriteOrder), so they are lost only with the
	// caller's later write they matter with.
	next, durable := cur, !r.Unsent
	switch {
	case !exists:
		next = begin(idempay.Record{Namespace: r.Namespace, ID: r.ID}, r, now)
	case cur.BeginsAttempt(r.Attempt):
		next.History = append(slices.Clone(cur.History), cur.Past())
		next = begin(next, r, now)
	case cur.ClaimableBy(r.Owner, r.Fingerprint, now):
		durable = durable && (cur.LeaseOwner != r.Owner || !now.Before(cur.LeaseUntil))
		next.LeaseOwner, next.LeaseUntil, next.UpdatedAt = r.Owner, now.Add(r.Lease), now
	default:
		return idempay.Reservation{Record: cur, Now: now}, s.wait(seen)
	}
	seq := s.put(k, next, durable)
	if durable {
		if err := s.wait(seq); err != nil {
			return idempay.Reservation{}, err
		}
	}
	return idempay.Reservation{Record: next, Created: next.CreatedFor(r), Claimed: true, Now: now}, nil
}

// KeepsWriteOrder implements idempay.WriteOrderKeeper: a crash keeps a
// prefix of the store's writes in their order (one process writes the
// file, and its log keeps a commit's entries in the order of their writes;
// see appendEntries), so a write is never kept without those before it.
func (s *Store) KeepsWriteOrder() bool { return true }

// begin makes r the current attempt of rec, open and leased to r.Owner.
func begin(rec idempay.Record, r idempay.ReserveRequest, now time.Time) idempay.Record {
	rec.Attempt, rec.Key, rec.Fingerprint, rec.State = r.Attempt, r.Key, r.Fingerprint, idempay.StateOpen
	rec.CreatedAt, rec.UpdatedAt, rec.ClosedAt = now, now, time.Time{}
	rec.Creator, rec.LeaseOwner, rec.LeaseUntil = r.Owner, r.Owner, now.Add(r.Lease)
	rec.ProviderRef, rec.Result = "", nil
	return rec
}

// reindex moves the index entry of a record from what it was (cur, if
// existed) to what it becomes (next): the open index by CreatedAt while
// open or pending, the closed index by ClosedAt once closed.
func reindex(tx *bolt.Tx, cur, next idempay.Record, existed bool) error {
	oldKey, newKey := []byte(nil), indexKey(next)
	if existed {
		oldKey = indexKey(cur)
		if string(oldKey) == string(newKey) {
			return nil
		}
		if err := indexBucket(tx, cur).Delete(oldKey); err != nil {
			return err
		}
	}
	return indexBucket(tx, next).Put(newKey, nil)
}

func indexKey(r idempay.Record) []byte {
	if r.State.Closed() {
		return closedKeyOf(r)
	}
	return openKeyOf(r)
}

func indexBucket(tx *bolt.Tx, r idempay.Record) *bolt.Bucket {
	if r.State.Closed() {
		return tx.Bucket(bucketClosed)
	}
	return tx.Bucket(bucketOpen)
}

// Load returns the record of the intent, or an error matching
// idempay.ErrNotFound. Times come back in UTC.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	w := &s.w
	w.mu.Lock()
	r, ok, seen, err := s.current(recordKey(namespace, intentID), namespace, intentID)
	if err == nil {
		err = s.wait(seen)
	}
	w.mu.Unlock()
	if err == nil && !ok {
		err = idempay.ErrNotFound
	}
	if err != nil {
		r = idempay.Record{}
	}
	return r, wrapErr("load", namespace, intentID, err)
}

// wrapErr adds the operation and intent to err, keeping it matchable with
// errors.Is; nil stays nil.
func wrapErr(op, ns, id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("filestore: %s %q/%q: %w", op, ns, id, err)
}
