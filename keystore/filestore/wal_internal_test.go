package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// kill lets go of the file as a killed process does: no checkpoint, no
// Close mark; what was logged stays in the log only.
func kill(s *Store) {
	s.stopSweep()
	<-s.sweepDone
	w := &s.w
	w.mu.Lock()
	w.closing = true
	w.want, w.cpWant = w.committed, w.cpDone
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	s.db.Close()
	s.log.f.Close()
	s.release()
}

// logEnd is where the log's entries ended when openKilled killed its
// store (the file itself is longer: preallocated).
var logEnd int64

func openKilled(t *testing.T, n int) (path string, keys []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "keys.db")
	s, err := Open(path, WithSweepInterval(0), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k := fmt.Sprintf("key-%d", i)
		_, err := s.Reserve(context.Background(), idempay.ReserveRequest{Namespace: "ns", ID: fmt.Sprint(i), Attempt: 1,
			Key: k, Fingerprint: "fp", Owner: "o", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	logEnd = s.log.off
	kill(s)
	return path, keys
}

func loadAll(t *testing.T, path string, keys []string) (found int, err error) {
	t.Helper()
	s, err := Open(path, WithSweepInterval(0), WithLogger(nil))
	if err != nil {
		return 0, err
	}
	defer s.Close()
	for i, k := range keys {
		r, err := s.Load(context.Background(), "ns", fmt.Sprint(i))
		if err == nil && r.Key == k {
			found++
		}
	}
	return found, nil
}

// TestLogReplayedAfterKill: reservations that were only in the log when
// the process died are in the store after the next Open.
func TestLogReplayedAfterKill(t *testing.T) {
	path, keys := openKilled(t, 50)
	if found, err := loadAll(t, path, keys); err != nil || found != 50 {
		t.Errorf("after a kill, %d of 50 logged reservations found, %v", found, err)
	}
}

// TestLogTornTail: a last write cut short by a crash (its reply never
// given) ends the log; everything before it is kept.
func TestLogTornTail(t *testing.T) {
	path, keys := openKilled(t, 20)
	f, err := os.OpenFile(path+logSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(make([]byte, 5), logEnd-5) // the cut: what was never written reads as zeros
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if found, err := loadAll(t, path, keys); err != nil || found != 19 {
		t.Errorf("after a torn last entry, %d of 20 found, %v; want the 19 before it", found, err)
	}
}

// TestLogDamagedInTheMiddle: a damaged entry followed by sound ones is not
// a torn end but damage that loses synced writes: ErrCorrupt.
func TestLogDamagedInTheMiddle(t *testing.T) {
	path, keys := openKilled(t, 20)
	b, err := os.ReadFile(path + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	b[logEnd/2] ^= 0xff
	if err := os.WriteFile(path+logSuffix, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadAll(t, path, keys); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open with a log damaged in the middle = %v; want ErrCorrupt", err)
	}
}

// TestLogOfAnotherStoreIgnored: a log left beside a store file that was
// deleted and made again belongs to the old one and is not applied.
func TestLogOfAnotherStoreIgnored(t *testing.T) {
	path, keys := openKilled(t, 5)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if found, err := loadAll(t, path, keys); err != nil || found != 0 {
		t.Errorf("a new store beside an old log found %d of its records, %v; want none", found, err)
	}
}

// TestLogTornInsideACommit: a crash can leave a commit's later entries on
// disk and an earlier one not; that commit was never synced, so it ends
// the log without being taken for damage.
func TestLogTornInsideACommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := Open(path, WithSweepInterval(0), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	r := func(i int) idempay.ReserveRequest {
		return idempay.ReserveRequest{Namespace: "ns", ID: fmt.Sprint(i), Attempt: 1, Key: fmt.Sprintf("key-%d", i),
			Fingerprint: "fp", Owner: "o", Lease: time.Minute}
	}
	if _, err := s.Reserve(context.Background(), r(0)); err != nil {
		t.Fatal(err)
	}
	// One commit of three records, written by hand as the committer does.
	start := s.log.off
	batch := map[string]dirtyRecord{}
	for i := 1; i <= 3; i++ {
		batch[string(recordKey("ns", fmt.Sprint(i)))] = dirtyRecord{rec: begin(idempay.Record{Namespace: "ns", ID: fmt.Sprint(i)}, r(i), time.Now().UTC())}
	}
	s.w.mu.Lock()
	err = s.log.appendEntries(batch)
	s.w.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	logEnd = start
	kill(s)
	// The commit's first entry never reached the disk; the others did.
	f, err := os.OpenFile(path+logSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(make([]byte, logHeader), start)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if found, err := loadAll(t, path, []string{"key-0", "key-1", "key-2", "key-3"}); err != nil || found != 1 {
		t.Errorf("after a commit torn inside, %d found, %v; want the one synced before it, and no error", found, err)
	}
}

// TestLogKeepsWriteOrder: a commit's entries must be in the order of its
// writes, so that a commit torn by a crash keeps a prefix of them: the
// ledger's charge facts, written before the record's close in the same
// unsynced commit, must never be lost while the close is kept.
func TestLogKeepsWriteOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	s, err := Open(path, WithSweepInterval(0), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 32
	batch := map[string]dirtyRecord{}
	for i := range n {
		id := fmt.Sprint(i)
		r := idempay.ReserveRequest{Namespace: "ns", ID: id, Attempt: 1, Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute}
		// Write numbers that run against the keys' own order.
		batch[string(recordKey("ns", id))] = dirtyRecord{rec: begin(idempay.Record{Namespace: "ns", ID: id}, r, time.Now().UTC()),
			seq: uint64(n - i)}
	}
	start := s.log.off
	s.w.mu.Lock()
	err = s.log.appendEntries(batch)
	s.w.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for off, want := start, n-1; want >= 0; want-- {
		e, size, ok := parseEntry(s.log.buf[off-start:], s.log.id, binary.BigEndian.Uint64(s.log.buf[off-start+8:]))
		if !ok {
			t.Fatalf("entry at %d unreadable", off)
		}
		if e.rec.ID != fmt.Sprint(want) {
			t.Fatalf("entry %d of the commit is intent %s; want %d (the commit's writes in their order)", n-1-want, e.rec.ID, want)
		}
		off += int64(size)
	}
}
