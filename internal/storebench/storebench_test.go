package storebench

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/keystore/postgres"
	"github.com/idempay/idempay/keystore/redis"
	"github.com/idempay/idempay/keystore/storetest"
)

// maxCallers is the most concurrent callers storetest measures. The
// PostgreSQL and Redis pools get as many connections, so that 64 callers
// measure the server and not a queue for the pool's default handful.
const maxCallers = 64

// BenchmarkReserveResolve measures each store under the name store=NAME,
// with storetest's conc=N levels below it.
func BenchmarkReserveResolve(b *testing.B) {
	stores := []struct {
		name string
		// setup runs once per store and returns the opener that
		// storetest calls for each measurement, with an empty store.
		setup func(b *testing.B) func(b *testing.B) idempay.KeyStore
	}{
		{"memory", func(*testing.B) func(*testing.B) idempay.KeyStore {
			return func(*testing.B) idempay.KeyStore { return memstore.New() }
		}},
		{"file", func(*testing.B) func(*testing.B) idempay.KeyStore { return openFile }},
		{"postgres", setupPostgres},
		{"redis", setupRedis},
	}
	for _, s := range stores {
		b.Run("store="+s.name, func(b *testing.B) {
			storetest.BenchReserveResolve(b, s.setup(b))
		})
	}
}

// openFile opens a file store with its default batching, in a temporary
// directory. The sweep is off: it would only add noise to a run shorter
// than its interval.
func openFile(b *testing.B) idempay.KeyStore {
	s, err := filestore.Open(filepath.Join(b.TempDir(), "keys.db"), filestore.WithSweepInterval(0))
	if err != nil {
		b.Fatalf("filestore.Open: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// setupPostgres connects once; each measurement gets a fresh schema,
// dropped when it ends, so that every level starts from an empty table.
func setupPostgres(b *testing.B) func(b *testing.B) idempay.KeyStore {
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN())
	if err != nil {
		b.Fatalf("IDEMPAY_POSTGRES_DSN: %v", err)
	}
	cfg.MaxConns = maxCallers
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		testenv.Unavailable(b, "PostgreSQL at %s: %v", testenv.PostgresDSN(), err)
	}
	b.Cleanup(pool.Close)
	testenv.Require(b, "PostgreSQL at "+testenv.PostgresDSN(), pool.Ping)
	return func(b *testing.B) idempay.KeyStore {
		schema := testenv.UniqueName("idempay_bench_")
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
				b.Errorf("drop schema %s: %v", schema, err)
			}
		})
		s, err := postgres.New(context.Background(), pool, postgres.WithSchema(schema))
		if err != nil {
			b.Fatalf("postgres.New: %v", err)
		}
		return s
	}
}

// setupRedis connects once; each measurement gets a fresh key prefix,
// whose keys are deleted when it ends.
func setupRedis(b *testing.B) func(b *testing.B) idempay.KeyStore {
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr(), PoolSize: maxCallers})
	b.Cleanup(func() { _ = c.Close() })
	testenv.Require(b, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error { return c.Ping(ctx).Err() })
	return func(b *testing.B) idempay.KeyStore {
		prefix := testenv.UniqueName("idempaybench:") + ":"
		b.Cleanup(func() { deletePrefix(b, c, prefix) })
		s, err := redis.New(c, redis.WithPrefix(prefix), redis.WithLogger(slog.New(slog.DiscardHandler)), redis.WithLossyServer()) // the CI server keeps nothing on disk: no warning per run
		if err != nil {
			b.Fatalf("redis.New: %v", err)
		}
		return s
	}
}

// deletePrefix deletes every key under prefix, a batch at a time.
func deletePrefix(b *testing.B, c *goredis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				b.Errorf("delete keys under %s: %v", prefix, err)
			}
			batch = batch[:0]
		}
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			flush()
		}
	}
	flush()
	if err := iter.Err(); err != nil {
		b.Errorf("scan keys under %s: %v", prefix, err)
	}
}
