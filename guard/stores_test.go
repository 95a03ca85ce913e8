package guard_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// storeCase is a KeyStore every store test of the guard runs against.
type storeCase struct {
	name string
	open func(t *testing.T) idempay.KeyStore // a fresh, empty store, closed when t ends
}

// storeCases lists the stores by name. memstore is here; filestore,
// postgres and redis are in stores_v2_test.go. PostgreSQL and Redis are
// required under CI (CI=true) and skipped elsewhere when they do not
// answer (internal/testenv).
func storeCases() []storeCase {
	cases := []storeCase{{"memstore", func(*testing.T) idempay.KeyStore { return memstore.New() }}}
	return append(cases, extraStores()...)
}

// forEachStore runs f as a subtest per store.
func forEachStore(t *testing.T, f func(t *testing.T, store idempay.KeyStore)) {
	for _, sc := range storeCases() {
		t.Run("store="+sc.name, func(t *testing.T) { f(t, sc.open(t)) })
	}
}
