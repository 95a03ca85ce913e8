// The stores other than memstore, on KeyStore contract v2: every store test
// of the guard runs on all four (see storeCases).

package guard_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
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

// openFilestore opens a store file in the test's directory, without the
// background sweep (the tests call Expire when they mean it).
func openFilestore(t *testing.T) idempay.KeyStore {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"), filestore.WithSweepInterval(0))
	if err != nil {
		t.Fatalf("filestore.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("filestore Close: %v", err)
		}
	})
	return s
}

// openPostgres opens a store in a schema of its own, dropped when t ends,
// so that runs of other packages or engineers on the server never meet it.
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
		if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	s, err := postgres.New(context.Background(), pool, postgres.WithSchema(schema))
	if err != nil {
		t.Fatalf("postgres.New: %v", err)
	}
	return s
}

// openRedis opens a store under a key prefix of its own, whose keys are
// deleted when t ends. The store's durability warning (a test server
// without appendonly) goes nowhere.
func openRedis(t *testing.T) idempay.KeyStore {
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = c.Close() })
	testenv.Require(t, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error { return c.Ping(ctx).Err() })
	prefix := testenv.UniqueName("guardtest:") + ":"
	t.Cleanup(func() { deletePrefix(t, c, prefix) })
	s, err := redis.New(c, redis.WithPrefix(prefix), redis.WithLogger(nil), redis.WithLossyServer())
	if err != nil {
		t.Fatalf("redis.New: %v", err)
	}
	return s
}

// deletePrefix deletes every key under prefix.
func deletePrefix(t *testing.T, c *goredis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for it.Next(ctx) {
		keys = append(keys, it.Val())
	}
	if err := it.Err(); err != nil {
		t.Errorf("scan %s*: %v", prefix, err)
		return
	}
	if len(keys) > 0 {
		if err := c.Del(ctx, keys...).Err(); err != nil {
			t.Errorf("delete %s*: %v", prefix, err)
		}
	}
}

// extraKillCases: the file store survives its process; the child opens it,
// and the parent opens it once the child is dead (bbolt allows one process
// at a time). Holding the file's lock proves the child dead, so that Open
// voids the child's leases (issue 8 item 7): there is no lease to wait out,
// and TestKilledHandlerIsReclaimedAfterItsLease, whose first retry expects
// 409, does not apply. TestKilledHandlerRunsAgainAtOnceOnFilestore checks
// the file store's rule; the child of both is the same.
func extraKillCases() []killCase {
	return []killCase{filestoreKillCase()}
}

func filestoreKillCase() killCase {
	return killCase{
		name: "filestore",
		pending: "the file store voids a dead holder's leases on Open, so a retry right after the kill runs the " +
			"handler at once instead of getting 409: TestKilledHandlerRunsAgainAtOnceOnFilestore checks that",
		prepare: func(t *testing.T) ([]string, func(*testing.T) idempay.KeyStore) {
			path := filepath.Join(t.TempDir(), "keys.db")
			return []string{"GUARD_KILL_FILE=" + path}, func(t *testing.T) idempay.KeyStore {
				s, err := filestore.Open(path, filestore.WithSweepInterval(0))
				if err != nil {
					t.Fatalf("filestore.Open after the kill: %v", err)
				}
				t.Cleanup(func() { _ = s.Close() })
				if n := s.VoidedLeases(); n != 1 {
					t.Errorf("Open after the kill voided %d leases; the dead child held 1", n)
				}
				return s
			}
		},
		child: func() (idempay.KeyStore, error) {
			return filestore.Open(os.Getenv("GUARD_KILL_FILE"), filestore.WithSweepInterval(0))
		},
	}
}

// Rule: a handler killed mid-request (SIGKILL) over the file store is run
// again by the first retry of the next process, without waiting for its
// lease: that process holds the file, so the killed one is dead, and its
// lease was voided on Open. The answer is then stored and replayed.
func TestKilledHandlerRunsAgainAtOnceOnFilestore(t *testing.T) {
	kc := filestoreKillCase()
	env, open := kc.prepare(t)
	killed := startAndKill(t, kc.name, env)
	store := open(t)
	c := &counter{}
	h := newGuard(t, store, guard.WithLease(killLease)).Wrap(c)
	w := serve(h, post("x"))
	if since := time.Since(killed); w.Code != http.StatusCreated || c.runs.Load() != 1 || w.Header().Get(guard.HeaderReplayed) != "" {
		t.Fatalf("retry %v after the kill (lease %v): %d %s, runs %d; want the handler run again at once",
			since.Round(time.Millisecond), killLease, w.Code, w.Body, c.runs.Load())
	}
	if w := serve(h, post("x")); w.Header().Get(guard.HeaderReplayed) != "true" || c.runs.Load() != 1 {
		t.Fatalf("replay after the takeover: %d, runs %d", w.Code, c.runs.Load())
	}
}
