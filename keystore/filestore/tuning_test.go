package filestore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// BenchmarkBatchTuning is the measurement behind DefaultMaxBatchSize,
// DefaultMaxBatchDelay and the lone-writer bypass in Store.write:
// Reserve+Resolve pairs at 1, 4, 16 and 64 callers over a grid of batch
// sizes and delays, with the bypass (mode=bypass, what Store does) and
// without it (mode=batch, plain db.Batch). It takes minutes; run it alone:
//
//	go test -run '^$' -bench BatchTuning -benchtime 0.5s ./keystore/filestore
func BenchmarkBatchTuning(b *testing.B) {
	for _, always := range []bool{false, true} {
		mode := "bypass"
		if always {
			mode = "batch"
		}
		for _, size := range []int{16, 32, 64, 256} {
			for _, delay := range []time.Duration{0, 250 * time.Microsecond, time.Millisecond} {
				for _, conc := range []int{1, 4, 16, 64} {
					name := fmt.Sprintf("mode=%s/size=%d/delay=%v/conc=%d", mode, size, delay, conc)
					b.Run(name, func(b *testing.B) {
						s, err := Open(filepath.Join(b.TempDir(), "keys.db"), WithSweepInterval(0),
							WithMaxBatchSize(size), WithMaxBatchDelay(delay))
						if err != nil {
							b.Fatal(err)
						}
						defer s.Close()
						s.cfg.alwaysBatch = always
						tunePairs(b, s, conc)
					})
				}
			}
		}
	}
}

// tunePairs is storetest's benchmark loop reduced to what the tuning needs,
// at any concurrency: b.N Reserve+Resolve pairs shared by conc goroutines,
// reporting the median and 99th percentile Reserve latency.
func tunePairs(b *testing.B, s *Store, conc int) {
	ctx := context.Background()
	var next atomic.Int64
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				r := idempay.ReserveRequest{Namespace: "t", IntentID: fmt.Sprint(i), Attempt: 1, Key: fmt.Sprint("k", i),
					Owner: "o", Lease: time.Minute}
				start := time.Now()
				if _, err := s.Reserve(ctx, r); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(start))
				res := idempay.Resolution{Namespace: "t", IntentID: r.IntentID, Key: r.Key, State: idempay.StateSucceeded,
					Result: []byte(`{"status":"succeeded"}`)}
				if err := s.Resolve(ctx, res); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Sorted(slices.Values(slices.Concat(lat...)))
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2])/1e3, "reserve-p50-us")
		b.ReportMetric(float64(all[len(all)*99/100])/1e3, "reserve-p99-us")
	}
}
