package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
)

// The shared stores (PostgreSQL, Redis) are real servers on loopback, one
// per test run; each seed gets its own table or key prefix, dropped at its
// end, so that one seed's Expire never sweeps another's records. Their
// clocks cannot be moved: today's stores judge leases and ages by the
// times the client writes, so virtual time still works with them.

var shared struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

func sharedPostgres(w *world, sc storeConfig) (storeConfig, error) {
	shared.once.Do(func() {
		shared.pool, shared.err = pgxpool.New(context.Background(), w.opt.pgDSN)
	})
	if shared.err != nil {
		return sc, shared.err
	}
	sc.pg, sc.table = shared.pool, fmt.Sprintf("sim_%d", w.seed)
	return sc, nil
}

func sharedRedis(w *world, sc storeConfig) (storeConfig, error) {
	sc.redisAddr, sc.prefix = w.opt.redisAddr, fmt.Sprintf("sim:%d:", w.seed)
	sc.dial = w.redisDial
	return sc, nil
}

// dropShared removes the seed's table or keys.
func (w *world) dropShared() {
	ctx := context.Background()
	switch w.cfg.store {
	case "postgres":
		if shared.pool != nil {
			_, _ = shared.pool.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS sim_%d; DROP TABLE IF EXISTS sim_%d_version", w.seed, w.seed))
		}
	case "redis":
		rc := goredis.NewClient(&goredis.Options{Addr: w.opt.redisAddr})
		defer rc.Close()
		iter := rc.Scan(ctx, 0, fmt.Sprintf("sim:%d:*", w.seed), 1000).Iterator()
		for iter.Next(ctx) {
			rc.Del(ctx, iter.Val())
		}
	}
}

// redisUp reports whether a Redis server answers at addr.
func redisUp(addr string) bool {
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return rc.Ping(ctx).Err() == nil
}
