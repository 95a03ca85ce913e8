package filestore

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestConcurrentWritesShareCommits: durable writes that are in flight
// together must share commits (and so fsyncs); otherwise the store is
// capped at one fsync per write.
func TestConcurrentWritesShareCommits(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers = 64
	before := s.w.commits.Load()
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(writers)
	for i := range writers {
		done.Go(func() {
			ready.Done()
			<-start
			_, err := s.Reserve(t.Context(), idempay.ReserveRequest{Namespace: "n", ID: fmt.Sprint(i), Attempt: 1,
				Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute})
			if err != nil {
				t.Error(err)
			}
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	// The first commit may hold one write; the others gather during its
	// sync: a few commits. Allow for stragglers on a busy machine.
	if n := s.w.commits.Load() - before; n > writers/4 {
		t.Errorf("%d concurrent Reserves used %d commits; want them to share commits", writers, n)
	}
}

// TestLoneWriterDoesNotWaitForBatch: with no other write in flight, a
// durable write commits at once instead of waiting the batch delay.
func TestLoneWriterDoesNotWaitForBatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	for i := range 3 {
		_, err := s.Reserve(t.Context(), idempay.ReserveRequest{Namespace: "n", ID: string(rune('a' + i)), Attempt: 1,
			Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("3 sequential Reserves took %v with an hour's batch delay: a durable write waited for a batch", d)
	}
}
