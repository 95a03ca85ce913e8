package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// TestLoadNotFoundNamesTheRecord: the lazily made not-found error still
// matches ErrNotFound and names the record, as fmt.Errorf's did.
func TestLoadNotFoundNamesTheRecord(t *testing.T) {
	_, err := memstore.New().Load(context.Background(), "ns/ledger", "i1")
	if !errors.Is(err, idempay.ErrNotFound) {
		t.Fatalf("Load = %v, want ErrNotFound", err)
	}
	const want = `memstore: load "ns/ledger"/"i1": ` // followed by ErrNotFound's text
	if got := err.Error(); len(got) <= len(want) || got[:len(want)] != want {
		t.Fatalf("Error() = %q, want it to begin %q", got, want)
	}
}
