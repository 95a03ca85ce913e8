package filestore

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// errClosed is returned by the calls made after Close.
var errClosed = errors.New("filestore: store closed")

// writes is the Store's write path: every write is applied at once to the
// records in memory (dirty) under mu, in the order of a sequence number,
// and a committer goroutine commits whatever is dirty to bbolt in one
// transaction at a time, so that concurrent writes share commits without
// waiting for a batch to fill: while one commit syncs, the next one's
// writes gather.
//
// A write that must be durable (see durableReserve and durableResolve)
// returns only once a commit holding it has synced. One that need not (a
// success, a renewal, a release) returns at once and rides on the next
// commit, which the next durable write or, at the latest, the batch delay
// starts. No answer rests on a write that may yet be lost: a call that
// reads a dirty record waits for its commit before it answers.
type writes struct {
	mu    sync.Mutex
	cond  *sync.Cond // signalled when committed, err or closing change
	dirty map[string]dirtyRecord
	seq   uint64 // the last write's number
	// want is the highest write number someone waits to see committed;
	// committed is the highest committed (every write up to it is in
	// the file).
	want, committed uint64
	err             error  // of the last commit, for the writes it held
	errSeq          uint64 // the last write that commit held
	timer           *time.Timer
	closing         bool
	commits         atomic.Int64 // how many commits it made
	wake            chan struct{}
	done            chan struct{}
}

// dirtyRecord is a record written in memory and not yet committed.
type dirtyRecord struct {
	rec idempay.Record
	seq uint64
}

func (s *Store) startWrites() {
	w := &s.w
	w.cond = sync.NewCond(&w.mu)
	w.dirty = map[string]dirtyRecord{}
	w.wake = make(chan struct{}, 1)
	w.done = make(chan struct{})
	go s.commitLoop()
}

// current returns the record under key k as the Store sees it now (dirty
// or in the file), whether there is one, and the write number it waits
// for if dirty (0 if not). It must be called with w.mu held.
func (s *Store) current(k []byte, ns, id string) (r idempay.Record, ok bool, seq uint64, err error) {
	if d, ok := s.w.dirty[string(k)]; ok {
		return d.rec, true, d.seq, nil
	}
	err = s.guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketRecords).Get(k)
			if v == nil {
				return nil
			}
			ok = true
			r, err = decodeRecord(ns, id, v)
			return err
		})
	})
	return r, ok, 0, err
}

// put records next under k in memory and returns its write number. With
// durable, the committer is woken at once; otherwise the write waits up to
// the batch delay for a durable one to carry it. It must be called with
// w.mu held.
func (s *Store) put(k []byte, next idempay.Record, durable bool) uint64 {
	w := &s.w
	w.seq++
	w.dirty[string(k)] = dirtyRecord{rec: next, seq: w.seq}
	if durable {
		s.need(w.seq)
	} else if w.timer == nil {
		w.timer = time.AfterFunc(s.cfg.maxBatchDelay, func() {
			w.mu.Lock()
			w.timer = nil
			s.need(w.seq)
			w.mu.Unlock()
		})
	}
	return w.seq
}

// need asks the committer to commit up to write seq. It must be called
// with w.mu held.
func (s *Store) need(seq uint64) {
	if seq <= s.w.want {
		return
	}
	s.w.want = seq
	select {
	case s.w.wake <- struct{}{}:
	default:
	}
}

// wait returns once write seq is committed, or the error of the commit that
// held it. It must be called with w.mu held, which it releases while it
// waits. seq 0 waits for nothing.
func (s *Store) wait(seq uint64) error {
	w := &s.w
	if seq == 0 {
		return nil
	}
	s.need(seq)
	for w.committed < seq {
		if w.err != nil && w.errSeq >= seq {
			return w.err
		}
		if p := s.broken.Load(); p != nil {
			return *p
		}
		w.cond.Wait()
	}
	return nil
}

// flush commits every write made so far and waits for it.
func (s *Store) flush() error {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.wait(s.w.seq)
}

// commitLoop commits what is dirty whenever a write waits for it, until
// Close.
func (s *Store) commitLoop() {
	w := &s.w
	defer close(w.done)
	for {
		w.mu.Lock()
		for w.want <= w.committed && !w.closing {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if w.want <= w.committed && w.closing {
			w.mu.Unlock()
			return
		}
		batch := make(map[string]dirtyRecord, len(w.dirty))
		for k, d := range w.dirty {
			batch[k] = d
		}
		upTo := w.seq
		w.mu.Unlock()

		err := s.guarded(func() error { return s.db.Update(func(tx *bolt.Tx) error { return commit(tx, batch) }) })

		w.commits.Add(1)
		w.mu.Lock()
		if err != nil {
			w.err, w.errSeq = err, upTo
		} else {
			w.err = nil
			w.committed = upTo
			for k, d := range batch {
				if w.dirty[k].seq == d.seq {
					delete(w.dirty, k)
				}
			}
		}
		w.cond.Broadcast()
		closing := w.closing
		w.mu.Unlock()
		if err != nil && closing {
			return
		}
		if err != nil {
			// The writes stay dirty, for the next durable write to try
			// again; do not spin on a disk that refuses them.
			<-w.wake
		}
	}
}

// commit writes the records of batch into the file, moving their index
// entries from what the file held.
func commit(tx *bolt.Tx, batch map[string]dirtyRecord) error {
	recs := tx.Bucket(bucketRecords)
	for k, d := range batch {
		key := []byte(k)
		v := recs.Get(key)
		var cur idempay.Record
		if v != nil {
			var err error
			if cur, err = decodeEntry(key, v); err != nil {
				return err
			}
		}
		if err := recs.Put(key, encodeRecord(d.rec)); err != nil {
			return err
		}
		if err := reindex(tx, cur, d.rec, v != nil); err != nil {
			return err
		}
	}
	return nil
}

// stopWrites commits what is dirty and stops the committer; later writes
// fail with errClosed.
func (s *Store) stopWrites() error {
	w := &s.w
	w.mu.Lock()
	err := s.wait(w.seq)
	w.closing = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	return err
}
