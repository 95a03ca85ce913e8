package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/storetest"
)

// TestConformance runs the shared KeyStore suite against a real PostgreSQL
// server, one fresh schema per case.
func TestConformance(t *testing.T) {
	pool := newPool(t, poolConfig(t))
	storetest.Run(t, func(t *testing.T) idempay.KeyStore {
		return openStoreIn(t, pool)
	})
}

// BenchmarkReserveResolve measures a charge's store writes (Reserve of a new
// intent, Resolve to succeeded) at 1, 16 and 64 concurrent callers, under
// the same names as the other stores' benchmarks for benchstat.
func BenchmarkReserveResolve(b *testing.B) {
	cfg := poolConfig(b)
	// Enough connections that 64 callers measure the server, not a queue
	// for the pool's default of max(4, NumCPU) connections.
	cfg.MaxConns = 64
	pool := newPool(b, cfg)
	b.Run("postgres", func(b *testing.B) {
		storetest.BenchReserveResolve(b, func(b *testing.B) idempay.KeyStore {
			return openStoreIn(b, pool)
		})
	})
}

// BenchmarkCharge measures one charge's store writes (Reserve of a new
// intent, then Resolve to succeeded) from one caller, with the close
// relaxed (a charge's outcome) and durable (a webhook handler's or a
// guarded endpoint's): the difference is the second WAL flush.
func BenchmarkCharge(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(fmt.Sprintf("durable=%v", durable), func(b *testing.B) {
			s := openStore(b)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				r := request("ns", fmt.Sprint("order-", i))
				res, err := s.Reserve(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns", ID: r.ID,
					Key: res.Record.Key, State: idempay.StateSucceeded, Durable: durable}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
