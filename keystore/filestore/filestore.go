// Package filestore is the durable idempay.KeyStore for one process: a
// single file managed by go.etcd.io/bbolt.
//
// # Writes and what a crash may lose
//
// Every write is applied in memory at once and committed by one committer,
// which takes every write waiting at each commit: concurrent writes share
// a commit without waiting for a batch to fill. A commit appends the
// records to the store's log (the file at Path()+"-log", see wal.go) and
// syncs it once; the log is applied to the store file in one bbolt commit
// every MiB, and at Close, ListOpen and Expire, and Open applies what a
// killed process left in it. After a Close the store file alone holds
// everything; while the store is open, or after a crash, the two files
// belong together: back up a closed store, or both files. An earlier
// version of this package does not read the log: after a crash, open and
// close the file with this version before going back to one.
//
// A write returns once it is synced when its loss could lead to a send or
// an answer no replay corrects: the insert of a new key, a new attempt, a
// claim by a new owner (Reserve, unless the request is Unsent), a close as
// failed or pending, and any Resolution marked Durable. The others return
// at once and ride on the
// next commit, at the latest after the batch delay (WithMaxBatchDelay): a
// close as succeeded, a renewal, a release. A crash of the process or the
// machine may lose those: the intent reopens, and resuming it resends the
// same key, which the provider answers by replay; a lease, the next Open
// voids anyway. No call answers from a write that may still be lost: one
// that reads a record not yet synced waits for its commit first. A crash
// keeps the writes in their order (Store.KeepsWriteOrder): what it loses
// is what came last, so the ledger's charge facts, written unsynced just
// before a charge's close, are never lost while the close is kept.
//
// BenchmarkReserveResolve measures the write path and BenchmarkFsync the
// disk's sync in the same run:
//
//	go test -run '^$' -bench 'Fsync|ReserveResolve' ./keystore/filestore
//
// # The store's clock
//
// Every instant in a record (CreatedAt, UpdatedAt, ClosedAt, LeaseUntil)
// and Reservation.Now is read from the store's clock, the one clock of the
// one process that has the file open (see WithClock to replace it). It is
// the host's wall clock read at Open, advanced from then on by a counter
// that does not step with the wall clock and, on Linux, keeps counting
// while the host is suspended (CLOCK_BOOTTIME; Go's monotonic clock stops
// there). The rule it keeps: an age never reads younger than it is, and
// Expire never deletes a record whose closed age is in doubt.
//
//   - The host's clock is trusted at Open, so one start with a wrong clock
//     cannot push later starts ahead. A file found ahead of it by more
//     than ClockTolerance was written by a fast clock (or this one is
//     slow): its later records are restamped, CreatedAt to the latest
//     instant not ahead (a key reads as old as it may be, and is settled
//     by lookup rather than resent), ClosedAt and UpdatedAt to now (a
//     closed record reads as young as it may be), leases keeping their
//     length. The jump is logged at warn level and counted (ClockJumps).
//   - Expire counts only the time the store was open: the gap between the
//     latest instant in the file and the clock at Open (a downtime, or a
//     clock that is fast: the file cannot tell) is left out of every
//     closed age. A record is therefore kept for its retention of open
//     time, plus any downtime since it closed.
//   - While the store is open its clock never steps; a wall clock that
//     moves away from it by more than ClockTolerance is logged and
//     counted, and followed at the next Open.
//
// What no store on one host can see: a wall clock that is wrong at Open
// and not ahead of the file (slow after a reboot) makes the keys created
// before that Open read younger by its error. Elsewhere than Linux, a
// suspend does the same by its length.
//
// # Layout
//
// The file holds four buckets: records (the records, keyed by a
// length-prefixed namespace followed by the intent ID), open (an index of
// open and pending records by namespace, CreatedAt and intent ID, which
// ListOpen pages through without touching closed records), closed (an index
// of succeeded and failed records by ClosedAt, which Expire reads without
// touching open ones) and meta (the file format version, the log's
// identity and last applied entry, the clock's downtimes). Records use a
// compact versioned binary layout, described in codec.go; the log's
// entries carry the same encoding. Files written in format 1 (up to the
// KeyStore contract v2) are migrated by Open; format 2 files of earlier
// versions open as they are (they have no log yet).
//
// # Opening, damage and leases
//
// Only one Store (one process) can have the file open at a time: bbolt
// takes an exclusive lock on it. A second Open in the same process fails at
// once with ErrLocked (share one *Store among the process's Clients, guards
// and Deduper); one in another process fails with ErrLocked after the open
// timeout. Services running several instances need a shared store.
//
// A log cut short by a crash (its last write, whose callers were never
// answered) ends at the cut; a log damaged before its end, which would lose
// synced writes, is refused with ErrCorrupt, and so is an entry that does
// not decode. A log left beside another store file is never applied to it.
//
// Only a missing file is created, and atomically (see create.go), so that
// no Open leaves an empty or partial file behind. An existing file is
// checked before bbolt maps it (check.go) and read through once when it is
// opened (verify.go: about a second per million records); an empty, short
// or damaged file is refused with an error matching ErrCorrupt rather than
// taken for a new store (every open key would be forgotten, and the next
// charge of those intents would get a new key and may charge twice) or
// allowed to crash the process. Later damage that bbolt trips on is
// reported as ErrCorrupt too, and the Store then refuses every call. A meta
// page torn by a power cut during a commit is refused as well, although
// bbolt could fall back to the other one: a damaged meta page cannot tell
// whether it held the later transaction, whose loss could lose a key.
//
// Holding the lock proves that the previous holder let go of the file. If
// it did so without Close (it was killed or crashed), its flights are dead
// too, and Open voids every lease in the file, so that its intents can be
// resumed at once rather than after their leases run out. After a Close
// the leases stand, since the process may still have flights in the air:
// close the Client, which waits for them, before its Store.
//
// # Retention
//
// A background sweep started by Open, every DefaultSweepInterval unless
// changed, deletes succeeded and failed records closed more than the
// retention window ago (DefaultRetention) in the store's open time (see
// above). Open and
// pending records are never deleted: they stand for money that may have
// moved. Expire can also be called directly.
package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// Store is a KeyStore kept in one bbolt file. It is safe for concurrent use.
// Build it with Open and release it with Close.
type Store struct {
	db    *bolt.DB
	cfg   config
	clock func() time.Time
	// w is the write path: the records written in memory and their
	// commits (see writes), to log (see wal).
	w   writes
	log wal
	// broken is set once bbolt has stopped on a damaged page; see
	// faultSafe.
	broken atomic.Pointer[error]
	// voided is how many leases Open voided.
	voided int
	// host is the clock without WithClock, nil with it.
	host *storeClock
	// downs are the gaps of the timeline that Expire leaves out (see
	// downtime); only Open and Expire touch them, under downsMu.
	downsMu sync.Mutex
	downs   []downtime

	release   func() // lets go of the file for this process (see hold)
	stopSweep context.CancelFunc
	sweepDone chan struct{}
	closeOnce sync.Once
	closeErr  error
}

var _ idempay.KeyStore = (*Store)(nil)

// Open opens the store file at path, creating it (and not its directory) if
// it does not exist, and starts the background sweep. It fails if an option
// is invalid or path is empty (an error matching idempay.ErrConfig),
// if another Store of this process holds the file (at once) or another
// process does (after the open timeout), with an error matching ErrLocked,
// if the directory is missing or not writable for a new file, with
// an error matching ErrCorrupt if the file is damaged (see the package
// documentation), or with an error matching ErrFormat if the file is not a
// store file this version can read.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return nil, &idempay.ConfigError{Field: "filestore path", Reason: "is empty: name the store file, e.g. /var/lib/myservice/idempay.db"}
	}
	s, err := open(path, cfg)
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", path, err)
	}
	s.startSweep()
	return s, nil
}

// open locks and checks the file, lets bbolt open it, verifies it and
// prepares it.
func open(path string, cfg config) (*Store, error) {
	f, release, err := lockedFile(path, cfg)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(path, cfg, f)
	if err != nil {
		release()
		return nil, err
	}
	s.release = release
	return s, nil
}

// openLocked is open once this Store holds the file f.
func openLocked(path string, cfg config, f *os.File) (*Store, error) {
	if _, err := checkFile(f); err != nil {
		f.Close()
		return nil, err
	}
	s := &Store{cfg: cfg, sweepDone: make(chan struct{})}
	err := recoverFault(func() (err error) {
		s.db, err = bolt.Open(path, cfg.fileMode, &bolt.Options{
			Timeout:  cfg.openTimeout,
			OpenFile: func(string, int, fs.FileMode) (*os.File, error) { return f, nil },
		})
		return err
	})
	if err != nil {
		f.Close() // bbolt closed it, unless it panicked
		return nil, err
	}
	if s.log.f, err = openLog(path, cfg.fileMode); err != nil {
		recoverFault(s.db.Close)
		return nil, err
	}
	if err := s.start(); err != nil {
		recoverFault(s.db.Close)
		s.log.f.Close()
		return nil, err
	}
	s.startWrites()
	return s, nil
}

// lockedFile opens the file at path, creating a new store file first if
// there is none, and takes its lock: first this process's (see hold), then
// the file's. release lets go of the first.
func lockedFile(path string, cfg config) (f *os.File, release func(), err error) {
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			if err := create(path, cfg); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		release, err := hold(f)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if err := lockFile(f, cfg.openTimeout); err != nil {
			f.Close()
			release()
			return nil, nil, err
		}
		return f, release, nil
	}
	return nil, nil, fmt.Errorf("the file keeps disappearing after being created")
}

// start verifies the file, applies what its log holds, sets the clock and
// prepares the file (see prepare), all under guard.
func (s *Store) start() error {
	var last time.Time
	var id []byte
	var applied uint64
	err := s.faultSafe(func() error {
		return s.db.View(func(tx *bolt.Tx) (err error) {
			if last, err = verify(tx); err != nil {
				return err
			}
			if seen := readLastSeen(tx); seen.After(last) {
				last = seen
			}
			id, applied = logState(tx)
			return nil
		})
	})
	if err != nil {
		return err
	}
	var entries []logEntry
	if id != nil {
		if entries, err = readLog(s.log.f, id, applied); err != nil {
			return err
		}
	}
	for _, e := range entries {
		last = latest(last, e.rec)
	}
	var plan clockPlan
	if s.clock = s.cfg.now; s.clock == nil {
		src := s.cfg.src
		if src.wall == nil {
			src = hostClock()
		}
		plan = planClock(src.wall().UTC(), last)
		s.host = newStoreClock(src, plan.base, s.cfg.logger)
		s.clock = s.host.now
	}
	s.log.lsn = applied + uint64(len(entries))
	return s.faultSafe(func() error {
		return s.db.Update(func(tx *bolt.Tx) (err error) {
			if err := applyLog(tx, entries, applied); err != nil {
				return err
			}
			if s.voided, err = prepare(tx); err != nil {
				return err
			}
			if s.log.id, err = ensureLogID(tx, id); err != nil {
				return err
			}
			if s.host == nil {
				return nil
			}
			s.downs, err = s.host.settle(tx, plan, last)
			return err
		})
	})
}

func (s *Store) startSweep() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSweep = cancel
	if s.cfg.sweepInterval > 0 {
		go s.sweep(ctx)
	} else {
		close(s.sweepDone)
	}
}

// Close stops the background sweep, waiting for a sweep in progress to
// stop, records in the file that the store was closed rather than
// abandoned (so the next Open keeps the leases, see the package
// documentation) and closes the file. Calls to the Store after Close fail.
// Close is idempotent: later calls return the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopSweep()
		<-s.sweepDone
		err := s.stopWrites()
		if err == nil {
			err = s.faultSafe(func() error { return s.db.Update(s.markClosed) })
		}
		if s.broken.Load() != nil {
			err = nil // reported by the calls that found it
		}
		s.closeErr = errors.Join(err, s.db.Close(), s.log.f.Close())
		s.release()
	})
	return s.closeErr
}

// Path returns the path of the store file. Its log is the file at Path()
// with "-log" appended (see the package documentation).
func (s *Store) Path() string { return s.db.Path() }

// VoidedLeases returns how many leases Open voided: those of the open and
// pending records of a previous holder that let go of the file without
// Close (see the package documentation).
func (s *Store) VoidedLeases() int { return s.voided }
