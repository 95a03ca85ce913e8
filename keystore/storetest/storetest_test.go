package storetest_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/keystore/storetest"
)

// TestRunPassesMemstore runs the suite against the reference store while
// the defective store of the self-test is being ported to the new contract.
func TestRunPassesMemstore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempay.KeyStore { return memstore.New() })
}
