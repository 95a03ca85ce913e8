// Package filestore is the durable idempay.KeyStore for one process: a
// single file managed by go.etcd.io/bbolt, behind a write-ahead log at
// Path()+"-log".
//
//	store, err := filestore.Open("/var/lib/myapp/idempay.db")
//	if err != nil { ... }
//	defer store.Close() // after the Clients, guards and Deduper that use it
//
// One process holds the file: a second Open fails with ErrLocked. Share
// one *Store among the process's Clients, guards and Deduper; services
// running several instances need a shared store (keystore/postgres,
// keystore/redis).
//
// A write that a crash could turn into a double charge (a new key, a new
// attempt, a claim of a request not Unsent, a close as failed or pending,
// any Resolution marked Durable) returns once it is synced; the others
// ride on the next commit, and losing them only reopens an intent whose
// key the provider answers by replay. A crash keeps the writes in their
// order (Store.KeepsWriteOrder): what it loses is what came last. After
// Close the store file alone holds everything; while it is open, or after
// a crash, back up both files.
//
// Open refuses an empty, short or damaged file with an error matching
// ErrCorrupt rather than taking it for a new store, and voids the leases a
// killed process left, so its intents resume at once. Every instant in a
// record is read from the store's clock: the host's clock at Open, carried
// by a counter that never steps, so an age never reads younger than it is.
//
// A background sweep deletes succeeded and failed records closed more than
// the retention window ago (DefaultRetention; WithRetention); open and
// pending records are never deleted.
//
// How writes, the clock, the layout and damage are handled is in
// README.md in this directory; the figures are in docs/performance.md.
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
// with "-log" appended (see README.md).
func (s *Store) Path() string { return s.db.Path() }

// VoidedLeases returns how many leases Open voided: those of the open and
// pending records of a previous holder that let go of the file without
// Close (see README.md).
func (s *Store) VoidedLeases() int { return s.voided }
