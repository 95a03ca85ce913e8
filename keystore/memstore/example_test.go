package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
)

// A second Reserve of the same intent, from another client instance, learns
// the first key and is refused the lease while the first instance holds it.
func Example() {
	ctx := context.Background()
	s := memstore.New()
	now := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)

	first, _ := s.Reserve(ctx, idempay.Record{
		Namespace: "stripe:acct_1", IntentID: "order-42", Key: "key-A",
		State: idempay.StateOpen, CreatedAt: now, UpdatedAt: now,
		LeaseOwner: "instance-1", LeaseUntil: now.Add(time.Minute),
	})
	second, _ := s.Reserve(ctx, idempay.Record{
		Namespace: "stripe:acct_1", IntentID: "order-42", Key: "key-B",
		State: idempay.StateOpen, CreatedAt: now, UpdatedAt: now.Add(time.Second),
		LeaseOwner: "instance-2", LeaseUntil: now.Add(time.Minute),
	})
	fmt.Println(first.Created, first.Claimed, first.Record.Key)
	fmt.Println(second.Created, second.Claimed, second.Record.Key)
	// Output:
	// true true key-A
	// false false key-A
}
