package idempay_test

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/redis"
)

// Rule: a Redis that lost its data set is noticed, and from then on no key
// is minted for an intent the store cannot prove new without asking the
// provider first. Here the server restarts without persistence after a
// charge succeeded: the record is gone, and the intent's next charge would
// mint a new key and charge the customer twice.
func TestLostRedisDataSetIsNoticed(t *testing.T) {
	srv := testenv.PrivateRedis(t, testenv.NoPersistence...)
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	store, err := redis.New(rdb, redis.WithLossyServer(), redis.WithLogger(nil))
	require.NoError(t, err)
	ctx := context.Background()

	s := startOps(t, store, refserver.Config{})
	c := opsClient(t, s, store)
	charged(t, c, "o", 1500, false)
	charged(t, c, "warm", 1500, false) // the store has seen the namespace's writes

	srv.Restart() // no persistence: every record is gone
	_, err = store.Load(ctx, "ownapi:default", "o")
	require.ErrorIs(t, err, idempay.ErrNotFound, "the data set is lost")

	ch, err := c.Charge(ctx, order("o"))
	require.NoError(t, err, "the provider's lookup answers: the intent is paid")
	assert.True(t, ch.Replayed, "answered by the lookup, not by a second charge")
	require.NoError(t, s.Ledger().Check(), "no intent charged twice")
	assert.Equal(t, 2, s.Ledger().Len(), "two intents, two charges")

	// An intent never charged is proven new by the lookup, and charged.
	_, err = c.Charge(ctx, order("new"))
	require.NoError(t, err)
	assert.Equal(t, 3, s.Ledger().Len())
}
