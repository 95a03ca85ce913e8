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

// runID keeps two runs against one server (two engineers, two CI jobs)
// out of each other's tables and keys.
var runID = fmt.Sprintf("%04x", time.Now().UnixNano()&0xffff)

func tableOf(seed uint64) string  { return fmt.Sprintf("sim_%s_%d", runID, seed) }
func prefixOf(seed uint64) string { return fmt.Sprintf("sim:%s:%d:", runID, seed) }

func sharedPostgres(w *world, sc storeConfig) (storeConfig, error) {
	shared.once.Do(func() {
		shared.pool, shared.err = pgxpool.New(context.Background(), w.opt.pgDSN)
	})
	if shared.err != nil {
		return sc, shared.err
	}
	sc.pg, sc.table = shared.pool, tableOf(w.seed)
	return sc, nil
}

func sharedRedis(w *world, sc storeConfig) (storeConfig, error) {
	sc.redisAddr, sc.prefix = w.opt.redisAddr, prefixOf(w.seed)
	sc.dial = w.redisDial
	return sc, nil
}

// dropShared removes the seed's table or keys.
func (w *world) dropShared() {
	ctx := context.Background()
	switch w.cfg.store {
	case "postgres":
		if shared.pool != nil {
			t := tableOf(w.seed)
			_, _ = shared.pool.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s; DROP TABLE IF EXISTS %s_schema_version", t, t))
		}
	case "redis":
		w.dropRedisKeys(ctx)
	}
}

// dropRedisKeys deletes the seed's keys and says how many there were.
func (w *world) dropRedisKeys(ctx context.Context) int {
	rc := goredis.NewClient(&goredis.Options{Addr: w.opt.redisAddr})
	defer rc.Close()
	n := 0
	iter := rc.Scan(ctx, 0, prefixOf(w.seed)+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if rc.Del(ctx, iter.Val()).Val() > 0 {
			n++
		}
	}
	return n
}

// redisUp reports whether a Redis server answers at addr.
func redisUp(addr string) bool {
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return rc.Ping(ctx).Err() == nil
}
