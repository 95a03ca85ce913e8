package filestore

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// expireChunk is how many records one Expire transaction deletes at most.
// A huge backlog (a sweep after weeks switched off) is then deleted in
// several short write transactions, between which Reserve calls get the
// write lock, rather than in one that blocks them all.
const expireChunk = 1000

// Expire deletes the succeeded and failed records created before cutoff and
// returns how many it deleted. Open and pending records are never deleted.
// It reads only the index of closed records, from the oldest, and stops at
// the first one created at or after cutoff. It checks ctx between chunks of
// deletions and returns the count so far with ctx's error if ctx ends.
func (s *Store) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	limit := timeKey(nil, cutoff)
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n := 0
		err := s.db.Update(func(tx *bolt.Tx) error {
			n = 0
			recs, closed := tx.Bucket(bucketRecords), tx.Bucket(bucketClosed)
			// Keys are gathered before deleting: a bbolt cursor may skip
			// an entry when the one under it is deleted.
			var keys [][]byte
			c := closed.Cursor()
			for k, _ := c.First(); k != nil && len(keys) < expireChunk; k, _ = c.Next() {
				if len(k) < timeKeyLen || bytes.Compare(k[:timeKeyLen], limit) >= 0 {
					break
				}
				keys = append(keys, bytes.Clone(k))
			}
			for _, k := range keys {
				rk := k[timeKeyLen:]
				if err := s.deleteClosed(recs, rk); err != nil {
					return err
				}
				if err := closed.Delete(k); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		total += n
		if err != nil {
			return total, fmt.Errorf("filestore: expire: %w", err)
		}
		if n < expireChunk {
			return total, nil
		}
	}
}

// deleteClosed deletes the record under rk, after checking that it is
// closed: the closed index is the only way in, and a record it names that
// turned out open would be money still in doubt.
func (s *Store) deleteClosed(recs *bolt.Bucket, rk []byte) error {
	ns, id, err := splitRecordKey(rk)
	if err != nil {
		return err
	}
	v := recs.Get(rk)
	if v == nil {
		return fmt.Errorf("%w: closed index names missing record %q/%q", ErrCorrupt, ns, id)
	}
	r, err := decodeRecord(ns, id, v)
	if err != nil {
		return err
	}
	if !r.State.Closed() {
		return fmt.Errorf("%w: closed index names %s record %q/%q", ErrCorrupt, r.State, ns, id)
	}
	return recs.Delete(rk)
}

// sweep runs Expire with a cutoff of now minus the retention window, once
// at start and then every sweep interval, until ctx ends. It runs at start
// so that a process restarted more often than the interval still sweeps.
func (s *Store) sweep(ctx context.Context) {
	defer close(s.sweepDone)
	t := time.NewTicker(s.cfg.sweepInterval)
	defer t.Stop()
	for {
		n, err := s.Expire(ctx, s.cfg.now().Add(-s.cfg.retention))
		if ctx.Err() != nil {
			// Close interrupted the sweep: not worth a report.
			return
		}
		if s.cfg.onSweep != nil {
			s.cfg.onSweep(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
