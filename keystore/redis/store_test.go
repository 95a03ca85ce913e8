package redis

import (
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/storetest"
)

// TestConformance runs the shared KeyStore suite against a real Redis
// server, one fresh key prefix per case.
func TestConformance(t *testing.T) {
	c := newClient(t, 0)
	storetest.Run(t, func(t *testing.T) idempay.KeyStore {
		return openStoreOn(t, c)
	})
}

// TestConformanceWithTTL runs the suite again with a closed-record TTL of a
// day. No case runs for that long, so no record expires during a case: the
// TTL must not change any rule.
func TestConformanceWithTTL(t *testing.T) {
	c := newClient(t, 0)
	storetest.Run(t, func(t *testing.T) idempay.KeyStore {
		return openStoreOn(t, c, WithClosedTTL(24*time.Hour))
	})
}

// BenchmarkReserveResolve measures a charge's store writes (Reserve of a new
// intent, Resolve to succeeded) at 1, 16 and 64 concurrent callers, under
// the same names as the other stores' benchmarks for benchstat.
func BenchmarkReserveResolve(b *testing.B) {
	c := newClient(b, 64)
	b.Run("redis", func(b *testing.B) {
		storetest.BenchReserveResolve(b, func(b *testing.B) idempay.KeyStore {
			return openStoreOn(b, c)
		})
	})
}
