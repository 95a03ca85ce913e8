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
// An insert, a new attempt or a claim is committed and fsynced before
// Reserve returns; concurrent calls share the commit. A call that only
// reads (the record is closed, has another fingerprint or is leased to
// another owner) commits nothing: a read-only transaction answers it. It
// returns an error if ctx is already done or the request is invalid; a
// call that has joined a batch is not abandoned when ctx ends during the
// wait.
func (s *Store) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if err := idempay.CheckReserveRequest(r); err != nil {
		return idempay.Reservation{}, fmt.Errorf("filestore: %w", err)
	}
	k := recordKey(r.Namespace, r.IntentID)

	// A read-only transaction first: a Reserve that changes nothing
	// (a replay of a closed intent, a losing contender) need not wait
	// for a batch and an fsync. If the answer could be a write, the
	// batch below decides again under the write lock.
	var res idempay.Reservation
	done := false
	err := s.guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) (err error) {
			res, done, err = s.readOnly(tx, k, r)
			return err
		})
	})
	if err != nil || done {
		return res, wrapErr("reserve", r.Namespace, r.IntentID, err)
	}
	err = s.write(func(tx *bolt.Tx) (err error) {
		// Batch may run this function more than once (when another
		// function of the batch fails, the batch is retried without
		// it), so it computes res from tx alone and assigns it whole.
		res, err = s.reserve(tx, k, r)
		return err
	})
	if err != nil {
		return idempay.Reservation{}, wrapErr("reserve", r.Namespace, r.IntentID, err)
	}
	return res, nil
}

// readOnly answers a Reserve that would change nothing; done is false when
// the Reserve may write.
func (s *Store) readOnly(tx *bolt.Tx, k []byte, r idempay.ReserveRequest) (res idempay.Reservation, done bool, err error) {
	v := tx.Bucket(bucketRecords).Get(k)
	if v == nil {
		return res, false, nil
	}
	cur, err := decodeRecord(r.Namespace, r.IntentID, v)
	if err != nil {
		return res, false, err
	}
	now := s.now()
	if cur.BeginsAttempt(r.Attempt) || cur.ClaimableBy(r.Owner, r.Fingerprint, now) {
		return res, false, nil
	}
	return idempay.Reservation{Record: cur, Now: now}, true, nil
}

// reserve is Reserve's write transaction.
func (s *Store) reserve(tx *bolt.Tx, k []byte, r idempay.ReserveRequest) (idempay.Reservation, error) {
	recs := tx.Bucket(bucketRecords)
	now := s.now()
	var cur idempay.Record
	v := recs.Get(k)
	if v != nil {
		var err error
		if cur, err = decodeRecord(r.Namespace, r.IntentID, v); err != nil {
			return idempay.Reservation{}, err
		}
	}
	next := cur
	switch {
	case v == nil:
		next = begin(idempay.Record{Namespace: r.Namespace, IntentID: r.IntentID}, r, now)
	case cur.BeginsAttempt(r.Attempt):
		next.History = append(slices.Clone(cur.History), cur.Past())
		next = begin(next, r, now)
	case cur.ClaimableBy(r.Owner, r.Fingerprint, now):
		next.LeaseOwner, next.LeaseUntil, next.UpdatedAt = r.Owner, now.Add(r.Lease), now
	default:
		return idempay.Reservation{Record: cur, Now: now}, nil
	}
	if err := recs.Put(k, encodeRecord(next)); err != nil {
		return idempay.Reservation{}, err
	}
	if err := reindex(tx, cur, next, v != nil); err != nil {
		return idempay.Reservation{}, err
	}
	return idempay.Reservation{Record: next, Created: next.CreatedFor(r), Claimed: true, Now: now}, nil
}

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

// write runs fn in a write transaction that concurrent writers share, under
// guard.
//
// A writer alone commits at once with db.Update. Only when other writes are
// in flight does it go through db.Batch, whose first caller waits up to
// MaxBatchDelay for others to join. Go timers shorter than a millisecond
// sleep a whole millisecond when the process is otherwise idle (the
// runtime's epoll wait has millisecond resolution), so without this bypass
// every write of a lone caller would pay about 1 ms on top of a 0.2 ms
// commit. fn must be safe to run more than once (see Reserve).
//
// In a batch, fn may run on another goroutine (the one that fills the batch
// or its timer's), so it is guarded there too: a damaged page it reads
// fails this call, and bbolt retries the rest of the batch without it.
func (s *Store) write(fn func(*bolt.Tx) error) error {
	safe := func(tx *bolt.Tx) error { return guard(func() error { return fn(tx) }) }
	return s.guarded(func() error {
		if s.writers.Add(1) == 1 && !s.cfg.alwaysBatch {
			defer s.writers.Add(-1)
			return s.db.Update(safe)
		}
		defer s.writers.Add(-1)
		return s.db.Batch(safe)
	})
}

// Load returns the record of the intent, or an error matching
// idempay.ErrNotFound. Times come back in UTC.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	var r idempay.Record
	err := s.guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketRecords).Get(recordKey(namespace, intentID))
			if v == nil {
				return idempay.ErrNotFound
			}
			var err error
			r, err = decodeRecord(namespace, intentID, v)
			return err
		})
	})
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
