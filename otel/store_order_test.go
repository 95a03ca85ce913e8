package idempayotel_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	idempayotel "github.com/idempay/idempay/otel"
)

// orderedStore is a store that says it keeps its writes in order.
type orderedStore struct{ idempay.KeyStore }

func (orderedStore) KeepsWriteOrder() bool { return true }

// TestStoreKeepsTheWriteOrderOfWhatItTimes: timing a store must not hide
// that it keeps its writes in order (the client would then sync writes
// the order makes safe to leave unsynced), nor claim it for one that does
// not.
func TestStoreKeepsTheWriteOrderOfWhatItTimes(t *testing.T) {
	k, ok := idempayotel.Store(orderedStore{memstore.New()}).(idempay.WriteOrderKeeper)
	if !ok || !k.KeepsWriteOrder() {
		t.Error("the timed store of a store that keeps its writes in order does not say so")
	}
	if k, ok := idempayotel.Store(memstore.New()).(idempay.WriteOrderKeeper); ok && k.KeepsWriteOrder() {
		t.Error("the timed store of memstore says it keeps its writes in order")
	}
}
