package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// at is the instant the store-specific tests write, microsecond-aligned so
// that values read back compare equal.
var at = time.Date(2030, time.January, 2, 3, 4, 5, 6000, time.UTC)

// record returns an open record of (ns, id) leased to "owner" for a minute.
func record(ns, id string) idempay.Record {
	return idempay.Record{
		Namespace: ns, IntentID: id, Key: "key-" + id, Fingerprint: "fp-" + id,
		State: idempay.StateOpen, CreatedAt: at, UpdatedAt: at,
		LeaseOwner: "owner", LeaseUntil: at.Add(time.Minute),
	}
}

// poolConfig parses the test DSN (IDEMPAY_POSTGRES_DSN or the local
// default). Tests change the config (tracers, pool size) before newPool.
func poolConfig(tb testing.TB) *pgxpool.Config {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN())
	if err != nil {
		tb.Fatalf("IDEMPAY_POSTGRES_DSN %q: %v", testenv.PostgresDSN(), err)
	}
	return cfg
}

// newPool connects with cfg, or skips (fails under CI) when the server does
// not answer. The pool is closed when the test ends.
func newPool(tb testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		testenv.Unavailable(tb, "PostgreSQL at %s: %v", testenv.PostgresDSN(), err)
	}
	tb.Cleanup(pool.Close)
	testenv.Require(tb, "PostgreSQL at "+testenv.PostgresDSN(), pool.Ping)
	return pool
}

// freshSchema returns the name of a schema no other test uses and drops it,
// with everything in it, when the test ends. Isolating by schema rather
// than by table lets a test create several stores and still clean up with
// one statement. The schema itself is created by the store's migration.
func freshSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	name := testenv.UniqueName("idempay_test_")
	tb.Cleanup(func() {
		// The test's own context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil {
			tb.Errorf("drop test schema %s: %v", name, err)
		}
	})
	return name
}

// openStore returns a Store in a fresh schema of a new pool.
func openStore(tb testing.TB, opts ...Option) *Store {
	tb.Helper()
	pool := newPool(tb, poolConfig(tb))
	return openStoreIn(tb, pool, opts...)
}

// openStoreIn returns a Store in a fresh schema of pool.
func openStoreIn(tb testing.TB, pool *pgxpool.Pool, opts ...Option) *Store {
	tb.Helper()
	opts = append([]Option{WithSchema(freshSchema(tb, pool))}, opts...)
	s, err := New(context.Background(), pool, opts...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}
