package filestore_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/storetest"
)

// BenchmarkReserveResolve measures the store with its default options, in
// the same shape as the other stores' benchmarks, for benchstat:
//
//	go test -run '^$' -bench ReserveResolve -count 5 ./keystore/...
func BenchmarkReserveResolve(b *testing.B) {
	b.Run("file", func(b *testing.B) {
		storetest.BenchReserveResolve(b, func(b *testing.B) idempay.KeyStore {
			return open(b, filestore.WithSweepInterval(0))
		})
	})
}
