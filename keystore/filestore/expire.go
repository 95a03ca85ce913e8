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

// Expire implements idempay.KeyStore: it deletes the succeeded and failed
// records closed more than retention ago by the store's clock (ClosedAt
// before now minus retention, leaving out the downtimes since: see
// README.md) and returns how many it deleted. Open and
// pending records are never deleted. It reads only the index of closed
// records, from the earliest closed, and stops at the first one closed at
// or after the cutoff. It checks ctx between chunks of deletions and
// returns the count so far with ctx's error if ctx ends. A negative
// retention is refused: it would delete records closed in the future of the
// clock, which no caller means.
func (s *Store) Expire(ctx context.Context, retention time.Duration) (int, error) {
	if retention < 0 {
		return 0, fmt.Errorf("filestore: expire: retention %v is negative", retention)
	}
	// The closed index is in the file: what is written in memory goes
	// there first.
	if err := s.flush(); err != nil {
		return 0, fmt.Errorf("filestore: expire: %w", err)
	}
	now := s.now()
	s.downsMu.Lock()
	defer s.downsMu.Unlock()
	limit := timeKey(nil, expireBefore(now, retention, s.downs))
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n := 0
		downs := s.downs
		err := s.faultSafe(func() error {
			return s.db.Update(func(tx *bolt.Tx) (err error) {
				if n, err = expireChunkBefore(tx, limit); err != nil {
					return err
				}
				downs, err = s.keepClock(tx, now)
				return err
			})
		})
		total += n
		if err != nil {
			return total, fmt.Errorf("filestore: expire: %w", err)
		}
		s.downs = downs
		if n < expireChunk {
			return total, nil
		}
	}
}

// keepClock writes, in an Expire transaction, what the next Open needs of
// the store's clock: the instant now, so that the time this store stays
// open after its last write is not taken for a downtime, and the
// downtimes that still precede a closed record. It returns those.
func (s *Store) keepClock(tx *bolt.Tx, now time.Time) ([]downtime, error) {
	if s.host == nil {
		return s.downs, nil
	}
	if err := writeLastSeen(tx, now); err != nil {
		return nil, err
	}
	var earliest time.Time
	k, _ := tx.Bucket(bucketClosed).Cursor().First()
	if len(k) >= timeKeyLen {
		earliest, _ = parseTimeKey(k)
	}
	downs := pruneDowntimes(s.downs, earliest, k == nil)
	if len(downs) == len(s.downs) {
		return downs, nil
	}
	return downs, writeDowntimes(tx, downs)
}

// expireChunkBefore deletes up to expireChunk of the records whose closed
// index key sorts before limit, the earliest first. On an error the
// transaction rolls back, so it reports none deleted.
func expireChunkBefore(tx *bolt.Tx, limit []byte) (int, error) {
	recs, closed := tx.Bucket(bucketRecords), tx.Bucket(bucketClosed)
	// Keys are gathered before deleting: a bbolt cursor may skip an
	// entry when the one under it is deleted.
	var keys [][]byte
	c := closed.Cursor()
	for k, _ := c.First(); k != nil && len(keys) < expireChunk; k, _ = c.Next() {
		if len(k) < timeKeyLen {
			return 0, corrupt("bad closed index key %q", k)
		}
		if bytes.Compare(k[:timeKeyLen], limit) >= 0 {
			break
		}
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := deleteClosed(recs, k); err != nil {
			return 0, err
		}
		if err := closed.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// deleteClosed deletes the record that closed index key k names, after
// checking that it is closed at the instant the key says: the closed index
// is the only way in, and a record it names that turned out open (money
// still in doubt) or closed later (a replay still owed) must not go.
func deleteClosed(recs *bolt.Bucket, k []byte) error {
	rk := k[timeKeyLen:]
	r, err := decodeEntry(rk, recs.Get(rk))
	if err != nil {
		return err
	}
	if !r.State.Closed() || !bytes.Equal(closedKeyOf(r), k) {
		return corrupt("the closed index entry %q names record %q/%q, %s, closed %v", k, r.Namespace, r.ID, r.State, r.ClosedAt)
	}
	return recs.Delete(rk)
}

// sweep runs Expire with the retention window, once at start and then
// every sweep interval, until ctx ends. It runs at start so that a process
// restarted more often than the interval still sweeps.
func (s *Store) sweep(ctx context.Context) {
	defer close(s.sweepDone)
	t := time.NewTicker(s.cfg.sweepInterval)
	defer t.Stop()
	for {
		n, err := s.Expire(ctx, s.cfg.retention)
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
