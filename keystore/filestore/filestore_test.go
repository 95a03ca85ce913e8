package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
	bolt "go.etcd.io/bbolt"
)

func TestReopenKeepsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := filestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustReserve(t, s, req("ns", "open", "k1", "owner"))
	done := mustReserve(t, s, req("ns", "done", "k2", "owner")).Record
	res := closeWith(done, idempay.StateSucceeded)
	res.Result = []byte{0, 1, 2}
	mustResolve(t, s, res)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v; want the first's result (nil)", err)
	}
	ctx := t.Context()
	if _, err := s.Load(ctx, "ns", "open"); err == nil {
		t.Error("Load after Close succeeded; want an error")
	}

	s, err = filestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.Load(ctx, "ns", "open"); err != nil || r.Key != "k1" || r.State != idempay.StateOpen {
		t.Errorf("after reopen, open record = %+v, %v; want key k1, open", r, err)
	}
	if r, err := s.Load(ctx, "ns", "done"); err != nil || r.State != idempay.StateSucceeded || string(r.Result) != "\x00\x01\x02" {
		t.Errorf("after reopen, resolved record = %+v, %v; want succeeded with its result", r, err)
	}
	if open := listAll(t, s, "ns", 10); len(open) != 1 || open[0].ID != "open" {
		t.Errorf("after reopen, ListOpen = %v; want the open record only", open)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	bad := map[string]filestore.Option{
		"retention 0":          filestore.WithRetention(0),
		"retention negative":   filestore.WithRetention(-time.Hour),
		"batch size 0":         filestore.WithMaxBatchSize(0),
		"batch delay negative": filestore.WithMaxBatchDelay(-1),
		"mode not writable":    filestore.WithFileMode(0o400),
		"mode with type bits":  filestore.WithFileMode(os.ModeDir | 0o700),
		"open timeout < 0":     filestore.WithOpenTimeout(-time.Second),
		"sweep interval < 0":   filestore.WithSweepInterval(-time.Second),
		"nil clock":            filestore.WithClock(nil),
		"nil sweep report":     filestore.WithSweepReport(nil),
	}
	for name, opt := range bad {
		path := filepath.Join(t.TempDir(), "keys.db")
		if s, err := filestore.Open(path, opt); err == nil {
			s.Close()
			t.Errorf("Open with %s succeeded; want an error", name)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open with %s created the file; an invalid option must fail before touching it", name)
		}
	}
}

func TestFileMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{filestore.DefaultFileMode, 0o640} {
		path := filepath.Join(dir, mode.String())
		s, err := filestore.Open(path, filestore.WithFileMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// The umask may clear bits, never set them.
		if got := fi.Mode().Perm(); got&^mode != 0 || got&0o600 != 0o600 {
			t.Errorf("file created with WithFileMode(%v) has mode %v", mode, got)
		}
	}
	// The new file is built under a temporary name and linked into
	// place: nothing else may be left in the directory but the logs.
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 4 {
		t.Errorf("directory holds %v, %v; want the two store files and their logs only", ents, err)
	}
	for _, mode := range []os.FileMode{filestore.DefaultFileMode, 0o640} {
		fi, err := os.Stat(filepath.Join(dir, mode.String()+"-log"))
		if err != nil || fi.Mode().Perm()&^mode != 0 {
			t.Errorf("log of a file created with WithFileMode(%v): %v, %v", mode, fi, err)
		}
	}
}

// TestOpenTimeout shows that an Open of a file another process holds fails
// after the open timeout, with ErrLocked and bbolt's ErrTimeout, instead of
// hanging, and that the file opens once released.
func TestOpenTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "keys.db")
	kill := startHolder(t, path)
	start := time.Now()
	if s, err := filestore.Open(path, filestore.WithOpenTimeout(100*time.Millisecond)); err == nil {
		s.Close()
		kill()
		t.Fatal("Open of a file another process holds succeeded; want a lock timeout")
	} else if !errors.Is(err, bolt.ErrTimeout) || !errors.Is(err, filestore.ErrLocked) {
		t.Errorf("Open of a file another process holds = %v; want an error matching ErrLocked and bbolt's ErrTimeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Open took %v to fail with a 100ms timeout", d)
	}
	kill()
	second, err := filestore.Open(path, filestore.WithOpenTimeout(time.Second), filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("Open after the holder died: %v", err)
	}
	second.Close()
}

// TestForeignFileRefused: a bbolt file written by another program, or by a
// future file format, is not taken over.
func TestForeignFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("sessions"))
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := filestore.Open(path); !errors.Is(err, filestore.ErrFormat) {
		if s != nil {
			s.Close()
		}
		t.Errorf("Open of another program's bbolt file = %v; want ErrFormat", err)
	}

	path = filepath.Join(t.TempDir(), "future.db")
	s, err := filestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte{99}) })
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := filestore.Open(path); !errors.Is(err, filestore.ErrFormat) {
		if s != nil {
			s.Close()
		}
		t.Errorf("Open of a file in format 99 = %v; want ErrFormat", err)
	}
}

// TestEmptyBboltFileBecomesAStore: a bbolt file with no bucket at all (one
// whose creation by an older version stopped before its first transaction)
// cannot hold a key, and is made a store.
func TestEmptyBboltFileBecomesAStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("Open of an empty bbolt file: %v", err)
	}
	defer s.Close()
	if res := mustReserve(t, s, req("ns", "a", "k", "o")); !res.Created {
		t.Errorf("Reserve in the new store = %+v; want created", res)
	}
}

// TestSweep checks that the background sweep expires the records closed
// more than the retention window ago by the store's clock, whenever they
// were created, keeps open ones, and stops with Close without leaving its
// goroutine behind.
func TestSweep(t *testing.T) {
	before := runtime.NumGoroutine()
	c := newClock()
	path := filepath.Join(t.TempDir(), "keys.db")
	// First a store without sweep, to write the records.
	s, err := filestore.Open(path, filestore.WithSweepInterval(0), filestore.WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old-done", "old-open", "settled-late"} {
		mustReserve(t, s, req("ns", id, "k-"+id, "o"))
	}
	c.Advance(time.Hour)
	mustResolve(t, s, idempay.Resolution{Namespace: "ns", ID: "old-done", Key: "k-old-done", State: idempay.StateFailed})
	// Unknown for three weeks, then settled: it must answer replays
	// for the whole retention from now.
	c.Advance(21 * 24 * time.Hour)
	mustResolve(t, s, idempay.Resolution{Namespace: "ns", ID: "settled-late", Key: "k-settled-late", State: idempay.StateSucceeded})
	s.Close()

	c.Advance(time.Hour)
	sweeps := make(chan int, 100)
	s, err = filestore.Open(path,
		filestore.WithClock(c.Now),
		filestore.WithRetention(7*24*time.Hour),
		filestore.WithSweepInterval(10*time.Millisecond),
		filestore.WithSweepReport(func(n int, err error) {
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			sweeps <- n
		}))
	if err != nil {
		t.Fatal(err)
	}
	if n := <-sweeps; n != 1 {
		t.Errorf("first sweep deleted %d records; want 1 (old-done)", n)
	}
	if n := <-sweeps; n != 0 {
		t.Errorf("second sweep deleted %d records; want 0", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = filestore.Open(path, filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"old-done": false, "old-open": true, "settled-late": true} {
		_, err := s.Load(t.Context(), "ns", id)
		if got := err == nil; got != want {
			t.Errorf("after sweep, Load(%q) = %v; want present=%v", id, err, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The goroutines of the closed stores must be gone. Goroutines
	// of the runtime and of other tests settle asynchronously, so allow
	// a moment.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before Open: the sweep leaked", n, before)
	}
}

// TestCloseStopsSweepPromptly: Close must not wait for the next tick of a
// long sweep interval.
func TestCloseStopsSweepPromptly(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"), filestore.WithSweepInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s with an hourly sweep")
	}
}

// TestExpireLargeBacklog deletes more than one Expire chunk, to cover the
// loop over several transactions.
func TestExpireLargeBacklog(t *testing.T) {
	s, c := openClocked(t)
	ctx := context.Background()
	const n = 2500
	// Concurrent writers, so that the records go in through shared
	// commits rather than 5000 fsyncs.
	errs := make(chan error, n)
	for i := range n {
		go func() {
			r := req("ns", fmt.Sprintf("id-%04d", i), "k", "o")
			if _, err := s.Reserve(ctx, r); err != nil {
				errs <- err
				return
			}
			errs <- s.Resolve(ctx, idempay.Resolution{Namespace: r.Namespace, ID: r.ID, Key: r.Key, State: idempay.StateSucceeded})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mustReserve(t, s, req("ns", "still-open", "k", "o"))
	c.Advance(time.Hour)
	got, err := s.Expire(ctx, time.Minute)
	if err != nil || got != n {
		t.Errorf("Expire = %d, %v; want %d", got, err, n)
	}
	if open := listAll(t, s, "ns", 100); len(open) != 1 {
		t.Errorf("ListOpen after Expire = %d records; want the one open record", len(open))
	}
}
