//go:build guardstores

// The stores being ported to KeyStore contract v2 on other branches. Once
// they compile, drop the build tags of this file and of
// stores_pending_test.go (delete that one), and every store test of the
// guard runs on all four.

package guard_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/postgres"
	"github.com/idempay/idempay/keystore/redis"
)

func extraStores() []storeCase {
	return []storeCase{
		{"filestore", openFilestore},
		{"postgres", openPostgres},
		{"redis", openRedis},
	}
}

func openFilestore(t *testing.T) idempay.KeyStore {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"))
	if err != nil {
		t.Fatalf("filestore.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openPostgres(t *testing.T) idempay.KeyStore {
	pool, err := pgxpool.New(context.Background(), testenv.PostgresDSN())
	if err != nil {
		testenv.Unavailable(t, "PostgreSQL at %s: %v", testenv.PostgresDSN(), err)
	}
	t.Cleanup(pool.Close)
	testenv.Require(t, "PostgreSQL at "+testenv.PostgresDSN(), pool.Ping)
	schema := testenv.UniqueName("guard_test_")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
	})
	s, err := postgres.New(context.Background(), pool, postgres.WithSchema(schema))
	if err != nil {
		t.Fatalf("postgres.New: %v", err)
	}
	return s
}

func openRedis(t *testing.T) idempay.KeyStore {
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = c.Close() })
	testenv.Require(t, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error { return c.Ping(ctx).Err() })
	s, err := redis.New(c, redis.WithPrefix(testenv.UniqueName("guardtest:")+":"))
	if err != nil {
		t.Fatalf("redis.New: %v", err)
	}
	return s
}

// extraKillCases: the file store survives its process; the child opens it,
// and the parent opens it once the child is dead (bbolt allows one process
// at a time).
func extraKillCases() []killCase {
	return []killCase{{
		name: "filestore",
		prepare: func(t *testing.T) ([]string, func(*testing.T) idempay.KeyStore) {
			path := filepath.Join(t.TempDir(), "keys.db")
			return []string{"GUARD_KILL_FILE=" + path}, func(t *testing.T) idempay.KeyStore {
				s, err := filestore.Open(path)
				if err != nil {
					t.Fatalf("filestore.Open after the kill: %v", err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
		},
		child: func() (idempay.KeyStore, error) { return filestore.Open(os.Getenv("GUARD_KILL_FILE")) },
	}}
}
