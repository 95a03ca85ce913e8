package filestore

import (
	"bytes"
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
// and a committer goroutine appends whatever is not logged yet to the log
// in one write and one sync at a time (see wal), so that concurrent writes
// share commits without waiting for a batch to fill: while one commit
// syncs, the next one's writes gather. The committer also checkpoints the
// records into the store file (one bbolt commit), after which they leave
// memory.
//
// A write that must be durable (see Store.reserve and durableResolve)
// returns only once a commit holding it has synced. One that need not (a
// success, a renewal, a release) returns at once and rides on the next
// commit, which the next durable write or, at the latest, the batch delay
// starts. No answer rests on a write that may yet be lost: a call that
// reads a record not yet synced waits for its commit before it answers.
type writes struct {
	mu    sync.Mutex
	cond  *sync.Cond // signalled when committed, err or closing change
	dirty map[string]dirtyRecord
	seq   uint64 // the last write's number
	// want is the highest write number someone waits to see committed;
	// committed is the highest committed (every write up to it is in
	// the log or the store file).
	want, committed uint64
	// cpWant is the highest write number a flush waits to see in the
	// store file itself; cpDone the highest there.
	cpWant, cpDone uint64
	// unlogged lists the keys written since the last log write (with
	// repeats).
	unlogged []string
	// absent holds keys found in neither dirty nor the file, so that
	// asking again (a charge asks for its ledger three times before it
	// writes it) reads nothing. Only this process writes the file, and
	// only through put, which deletes the key here first; Expire only
	// deletes. Bounded by maxAbsent: emptied when full.
	absent  map[string]struct{}
	err     error  // of the last commit, for the writes it held
	errSeq  uint64 // the last write that commit held
	timer   *time.Timer
	closing bool
	commits atomic.Int64 // how many commits it made
	wake    chan struct{}
	done    chan struct{}
}

// maxAbsent bounds writes.absent: a few thousand keys of intents in
// flight.
const maxAbsent = 4096

// dirtyRecord is a record written in memory and not yet checkpointed
// into the store file (it may be in the log).
type dirtyRecord struct {
	rec idempay.Record
	seq uint64
}

func (s *Store) startWrites() {
	w := &s.w
	w.cond = sync.NewCond(&w.mu)
	w.dirty = map[string]dirtyRecord{}
	w.absent = map[string]struct{}{}
	w.wake = make(chan struct{}, 1)
	w.done = make(chan struct{})
	go s.commitLoop()
}

// current returns the record under key k as the Store sees it now (dirty
// or in the file), whether there is one, and the write number it waits
// for if dirty (0 if not). It must be called with w.mu held.
func (s *Store) current(k []byte, ns, id string) (r idempay.Record, ok bool, seq uint64, err error) {
	if d, ok := s.w.dirty[string(k)]; ok {
		if d.seq <= s.w.committed {
			return cloneRecord(d.rec), true, 0, nil
		}
		return cloneRecord(d.rec), true, d.seq, nil
	}
	if _, ok := s.w.absent[string(k)]; ok {
		return r, false, 0, nil
	}
	defer func() {
		if err == nil && !ok {
			if len(s.w.absent) >= maxAbsent {
				clear(s.w.absent)
			}
			s.w.absent[string(k)] = struct{}{}
		}
	}()
	err = s.faultSafe(func() error {
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
	delete(w.absent, string(k))
	w.dirty[string(k)] = dirtyRecord{rec: cloneRecord(next), seq: w.seq}
	w.unlogged = append(w.unlogged, string(k))
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

// flush brings every write made so far into the store file itself (a
// checkpoint, see wal) and waits for it.
func (s *Store) flush() error {
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	target := w.seq
	if target <= w.cpDone {
		return nil
	}
	w.cpWant = max(w.cpWant, target)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	for w.cpDone < target {
		if w.err != nil && w.errSeq >= target {
			return w.err
		}
		if p := s.broken.Load(); p != nil {
			return *p
		}
		w.cond.Wait()
	}
	return nil
}

// commitLoop logs what is dirty whenever a write waits for it, and
// checkpoints the log into the store file when it has grown or a flush
// asks, until Close.
func (s *Store) commitLoop() {
	w := &s.w
	defer close(w.done)
	for {
		w.mu.Lock()
		for w.want <= w.committed && w.cpWant <= w.cpDone && !w.closing {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if w.want <= w.committed && w.cpWant <= w.cpDone && w.closing {
			w.mu.Unlock()
			return
		}
		var err error
		if w.want > w.committed {
			err = s.logRound()
		}
		if err == nil && (w.cpWant > w.cpDone || s.log.off >= checkpointBytes) {
			err = s.checkpoint()
		}
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

// logRound writes the dirty records not in the log yet to it, with w.mu
// held on entry and exit, released while it writes.
func (s *Store) logRound() error {
	w := &s.w
	batch := make(map[string]dirtyRecord, len(w.unlogged))
	for _, k := range w.unlogged {
		if d, ok := w.dirty[k]; ok && d.seq > w.committed {
			batch[k] = d
		}
	}
	keys := w.unlogged
	w.unlogged = nil
	upTo := w.seq
	w.mu.Unlock()
	err := s.log.appendEntries(batch)
	w.commits.Add(1)
	w.mu.Lock()
	if err != nil {
		w.unlogged = append(keys, w.unlogged...)
		w.err, w.errSeq = err, upTo
	} else {
		w.err = nil
		w.committed = max(w.committed, upTo)
	}
	w.cond.Broadcast()
	return err
}

// checkpoint applies every dirty record to the store file in one bbolt
// commit, with the last logged entry's number, and starts the log again
// from its beginning. It runs with w.mu held on entry and exit, released
// while it commits.
func (s *Store) checkpoint() error {
	w := &s.w
	batch := make(map[string]dirtyRecord, len(w.dirty))
	for k, d := range w.dirty {
		batch[k] = d
	}
	upTo, cpWant, lsn := w.seq, w.cpWant, s.log.lsn
	w.mu.Unlock()
	err := s.faultSafe(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			if err := commit(tx, batch); err != nil {
				return err
			}
			return putApplied(tx, lsn)
		})
	})
	w.mu.Lock()
	if err != nil {
		w.err, w.errSeq = err, upTo
		w.cond.Broadcast()
		return err
	}
	s.log.off = 0
	// Every write up to upTo is in the store file now, logged or not.
	w.committed = max(w.committed, upTo)
	w.cpDone = max(w.cpDone, cpWant, upTo)
	for k, d := range batch {
		if w.dirty[k].seq == d.seq {
			delete(w.dirty, k)
		}
	}
	w.cond.Broadcast()
	return nil
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
	err := s.flush()
	w := &s.w
	w.mu.Lock()
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

// cloneRecord is r with its own copies of the byte slices, which the
// caller may change after giving or getting them: the store keeps its own.
func cloneRecord(r idempay.Record) idempay.Record {
	r.Result = bytes.Clone(r.Result)
	if r.History != nil {
		h := make([]idempay.PastAttempt, len(r.History))
		for i, p := range r.History {
			p.Result = bytes.Clone(p.Result)
			h[i] = p
		}
		r.History = h
	}
	return r
}
