package redis_test

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/redis"
)

// A store shared by every instance of a service. Settled records expire
// two days after they were settled; open ones never do.
func Example() {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	store, err := redis.New(rdb,
		redis.WithPrefix("payments:"),
		redis.WithClosedTTL(48*time.Hour),
	)
	if err != nil {
		panic(err)
	}

	// Reconciliation: every intent whose outcome is still unknown, a page
	// at a time.
	var after idempay.Cursor
	for {
		page, err := store.ListOpen(context.Background(), "stripe:acct_123", after, 100)
		if err != nil {
			fmt.Println("list open:", err)
			return
		}
		for _, r := range page {
			fmt.Println(r.ID, r.State, r.Key)
		}
		if len(page) < 100 {
			return
		}
		after = idempay.CursorOf(page[len(page)-1])
	}
}
