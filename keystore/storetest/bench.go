package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// benchConcurrency lists the numbers of concurrent callers
// BenchReserveResolve measures: one caller shows the latency a lone charge
// pays, 16 and 64 show whether concurrent charges share the store's writes.
// It is fixed so that every store's figures are comparable.
var benchConcurrency = [...]int{1, 16, 64}

// BenchReserveResolve measures the store's write path as the Client drives
// it for one charge: Reserve a new intent, then Resolve it to succeeded. It
// runs one sub-benchmark per level of concurrency (1, 16 and 64 callers),
// named "conc=N", so
// that a store's benchmark reads, for example,
//
//	func BenchmarkReserveResolve(b *testing.B) {
//		b.Run("file", func(b *testing.B) { storetest.BenchReserveResolve(b, open) })
//	}
//
// and benchstat can compare stores and concurrency levels by name.
//
// open is called once per measurement and should return an empty store.
// ns/op is the wall time of one Reserve+Resolve pair divided among the
// callers (the inverse of throughput); the extra metrics reserve-p50-us and
// reserve-p99-us give the latency one caller sees on Reserve, which
// throughput alone hides when a store batches writes behind a timer.
func BenchReserveResolve(b *testing.B, open func(b *testing.B) idempay.KeyStore) {
	for _, conc := range benchConcurrency {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			benchPairs(b, open(b), conc)
		})
	}
}

// benchPairs runs b.N Reserve+Resolve pairs on s from conc goroutines that
// take the next intent number from a shared counter, so that the total work
// is b.N whatever conc is and ns/op stays comparable across levels.
func benchPairs(b *testing.B, s idempay.KeyStore, conc int) {
	ctx := context.Background()
	result := []byte(`{"id":"pi_bench","object":"payment_intent","amount":1500,"currency":"jpy","status":"succeeded"}`)
	var next atomic.Int64
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Now()
	for g := range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				id := fmt.Sprintf("bench-%09d", i)
				r := request(id, fmt.Sprintf("owner-%d", g))
				r.Namespace = "bench"
				start := time.Now()
				got, err := s.Reserve(ctx, r)
				lat[g] = append(lat[g], time.Since(start))
				if err != nil || !got.Created {
					b.Errorf("Reserve(%q) = created %v, %v; want a new record", id, got.Created, err)
					return
				}
				res := resolution(got.Record, idempay.StateSucceeded)
				res.ProviderRef = "pi_" + id
				res.Result = result
				if err := s.Resolve(ctx, res); err != nil {
					b.Errorf("Resolve(%q) = %v", id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()

	all := slices.Concat(lat...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[int(p*float64(len(all)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "reserve-p50-us")
	b.ReportMetric(pct(0.99), "reserve-p99-us")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
}
