package postgres

import (
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
