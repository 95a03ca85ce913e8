package bench_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// concurrency is the callers of every benchmark: one, a busy service, a
// saturated one.
var concurrency = []int{1, 16, 64}

// benchSeq numbers the orders of every sub-benchmark, so that no two ops
// ever share an intent ID on one server or store.
var benchSeq atomic.Int64

// benchCharge charges order id once and fails unless it succeeded.
type benchCharge func(ctx context.Context, id string) error

// benchHTTPClient returns a client on a transport of its own that keeps
// conc idle connections, so that connection churn does not decide the
// result.
func benchHTTPClient(b *testing.B, conc int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(conc, tr.MaxIdleConnsPerHost)
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// benchOps runs b.N ops of charge from conc goroutines taking the next op
// from a shared counter: ns/op is wall time divided by ops (the inverse of
// charges/s), p50-us and p99-us the latency one caller sees. B/op and
// allocs/op count the whole process, an in-process server's share included
// (the same for every client of one benchmark: they send the same request).
func benchOps(b *testing.B, charge benchCharge, conc int) {
	ctx := context.Background()
	prefix := "order-" + strconv.FormatInt(benchSeq.Add(1), 10) + "-"
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
				id := prefix + strconv.FormatInt(i, 10)
				start := time.Now()
				err := charge(ctx, id)
				lat[g] = append(lat[g], time.Since(start))
				if err != nil {
					b.Errorf("%s: %v", id, err)
					next.Store(int64(b.N)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()

	all := slices.Concat(lat...)
	if b.Failed() || len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[int(p*float64(len(all)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "p50-us")
	b.ReportMetric(pct(0.99), "p99-us")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "charges/s")
}
