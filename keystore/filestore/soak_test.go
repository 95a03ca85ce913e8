package filestore_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
)

var soakCharges = flag.Int("soak.charges", 0, "charges of TestSoakRetention (0 skips it; the goal is measured at 100000)")

// TestSoakRetention runs Reserve+Resolve for -soak.charges intents from 16
// callers, the store's clock moving 1 ms per charge and Expire running as
// the sweep would, with a retention of 10,000 charges: past the first
// retention, neither the heap nor the file may keep growing.
//
//	go test -run TestSoakRetention -soak.charges 100000 -v ./keystore/filestore
func TestSoakRetention(t *testing.T) {
	if *soakCharges == 0 {
		t.Skip("set -soak.charges to run it")
	}
	n := *soakCharges
	const retention = 10 * time.Second // 10,000 charges at 1 ms each
	c := newClock()
	s, path := openAt(t, filestore.WithClock(c.Now), filestore.WithSweepInterval(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex // Expire and the size reading beside the writers
	type sample struct {
		at         int
		heap, file int64
	}
	var samples []sample
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				c.Advance(time.Millisecond)
				r := req("soak", fmt.Sprintf("intent-%07d", i), "key", "o")
				got, err := s.Reserve(t.Context(), r)
				if err == nil {
					res := closeWith(got.Record, idempay.StateSucceeded)
					res.Result = make([]byte, 120)
					err = s.Resolve(t.Context(), res)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%5000 == 0 {
					mu.Lock()
					if _, err := s.Expire(t.Context(), retention); err != nil {
						t.Error(err)
					}
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					fi, _ := os.Stat(path)
					samples = append(samples, sample{at: i, heap: int64(ms.HeapInuse), file: fi.Size()})
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	var peakHeap, peakFile int64 // after the first two retentions
	for _, sm := range samples {
		t.Logf("after %7d charges: heap in use %6.1f MiB, file %6.1f MiB", sm.at, float64(sm.heap)/(1<<20), float64(sm.file)/(1<<20))
		if sm.at <= 20000 {
			peakHeap, peakFile = max(peakHeap, sm.heap), max(peakFile, sm.file)
		}
	}
	last := samples[len(samples)-1]
	if n >= 50000 && (last.file > peakFile*5/4 || last.heap > peakHeap*3/2) {
		t.Errorf("after %d charges the heap is %d and the file %d bytes; after two retentions they were at most %d and %d: growth beyond retention",
			last.at, last.heap, last.file, peakHeap, peakFile)
	}
}
