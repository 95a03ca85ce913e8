package memstore_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/keystore/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempay.KeyStore { return memstore.New() })
}

// TestZeroValueConformance shows that the zero Store works without New.
func TestZeroValueConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempay.KeyStore { return new(memstore.Store) })
}

func BenchmarkReserveResolve(b *testing.B) {
	b.Run("mem", func(b *testing.B) {
		storetest.BenchReserveResolve(b, func(b *testing.B) idempay.KeyStore { return memstore.New() })
	})
}
