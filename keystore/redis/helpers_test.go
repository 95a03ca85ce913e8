package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// newClient connects to IDEMPAY_REDIS_ADDR (or the local default), or
// skips (fails under CI) when the server does not answer.
func newClient(tb testing.TB, poolSize int) *goredis.Client {
	tb.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr(), PoolSize: poolSize})
	tb.Cleanup(func() { _ = c.Close() })
	testenv.Require(tb, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error {
		return c.Ping(ctx).Err()
	})
	return c
}

// freshPrefix returns a key prefix no other test uses and deletes every key
// under it when the test ends. A prefix rather than a database number,
// because a Redis Cluster has only database 0 and the tests should run
// against one too.
func freshPrefix(tb testing.TB, c *goredis.Client) string {
	tb.Helper()
	prefix := testenv.UniqueName("idempaytest:") + ":"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 1000 {
				c.Del(ctx, batch...)
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			c.Del(ctx, batch...)
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("clean up keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

// openStoreOn returns a Store on c under a fresh prefix.
func openStoreOn(tb testing.TB, c *goredis.Client, opts ...Option) *Store {
	tb.Helper()
	s, err := New(c, append([]Option{WithPrefix(freshPrefix(tb, c))}, opts...)...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}

// at is the instant the store-specific tests write.
var at = time.Date(2030, time.January, 2, 3, 4, 5, 6007, time.UTC)

// record returns an open record of (ns, id) leased to "owner" for a minute.
func record(ns, id string) idempay.Record {
	return idempay.Record{
		Namespace: ns, IntentID: id, Key: "key-" + id, Fingerprint: "fp-" + id,
		State: idempay.StateOpen, CreatedAt: at, UpdatedAt: at,
		LeaseOwner: "owner", LeaseUntil: at.Add(time.Minute),
	}
}
