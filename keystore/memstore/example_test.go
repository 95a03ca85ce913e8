package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// A second Reserve of the same intent, from another flight, learns the first
// key and is refused the lease while the first flight holds it.
func Example() {
	ctx := context.Background()
	s := memstore.New()
	req := idempay.ReserveRequest{
		Namespace: "stripe:acct_1", ID: "order-42", Attempt: 1,
		Key: "key-A", Fingerprint: "fp-1", Owner: "instance-1/flight-1", Lease: time.Minute,
	}
	first, _ := s.Reserve(ctx, req)
	req.Key, req.Owner = "key-B", "instance-2/flight-7"
	second, _ := s.Reserve(ctx, req)
	fmt.Println(first.Created, first.Claimed, first.Record.Key)
	fmt.Println(second.Created, second.Claimed, second.Record.Key)
	// Output:
	// true true key-A
	// false false key-A
}
