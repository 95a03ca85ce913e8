package filestore

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	bolt "go.etcd.io/bbolt"
)

// TestConcurrentWritesShareCommits: writes that are in flight together
// must share transactions (and so fsyncs); otherwise the store is capped
// at one fsync per write.
func TestConcurrentWritesShareCommits(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers = 64
	var mu sync.Mutex
	txs := map[*bolt.Tx]bool{}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(writers)
	for range writers {
		done.Go(func() {
			ready.Done()
			<-start
			err := s.write(func(tx *bolt.Tx) error {
				mu.Lock()
				txs[tx] = true
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	// 64 writers in batches of DefaultMaxBatchSize, plus the first, which
	// may commit alone: about 5 transactions. Allow for stragglers.
	if len(txs) > writers/4 {
		t.Errorf("%d concurrent writes used %d transactions; want them to share commits (about %d)",
			writers, len(txs), writers/DefaultMaxBatchSize+1)
	}
}

// TestLoneWriterDoesNotWaitForBatch: with no other write in flight, Reserve
// commits at once instead of waiting MaxBatchDelay for company.
func TestLoneWriterDoesNotWaitForBatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "keys.db"), WithSweepInterval(0), WithMaxBatchDelay(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	for i := range 3 {
		_, err := s.Reserve(t.Context(), idempay.ReserveRequest{Namespace: "n", IntentID: string(rune('a' + i)), Attempt: 1,
			Key: "k", Fingerprint: "fp", Owner: "o", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("3 sequential Reserves took %v with a 10s batch delay: a lone writer waited for a batch", d)
	}
}
