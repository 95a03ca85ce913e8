package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
)

// request returns a first-attempt reservation of (ns, id) by "owner" with a
// lease of a minute: longer than any test, so it only runs out when a test
// moves lease_until itself.
func request(ns, id string) idempay.ReserveRequest {
	return idempay.ReserveRequest{
		Namespace: ns, ID: id, Attempt: 1, Key: "key-" + id, Fingerprint: "fp-" + id,
		Owner: "owner", Lease: time.Minute,
	}
}

// reserve reserves r in s and fails the test on an error.
func reserve(tb testing.TB, s *Store, r idempay.ReserveRequest) idempay.Reservation {
	tb.Helper()
	res, err := s.Reserve(context.Background(), r)
	if err != nil {
		tb.Fatalf("Reserve(%s/%s by %s) = %v", r.Namespace, r.ID, r.Owner, err)
	}
	return res
}

// resolve resolves the current key of (ns, id) to st and fails the test on an
// error.
func resolve(tb testing.TB, s *Store, ns, id string, st idempay.State) {
	tb.Helper()
	ctx := context.Background()
	rec, err := s.Load(ctx, ns, id)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: ns, ID: id, Key: rec.Key, State: st,
		Result: []byte(`{"state":"` + string(st) + `"}`)}); err != nil {
		tb.Fatalf("Resolve(%s/%s, %s) = %v", ns, id, st, err)
	}
}

// serverNow reads the server's clock.
func serverNow(tb testing.TB, s *Store) time.Time {
	tb.Helper()
	var now time.Time
	if err := s.pool.QueryRow(context.Background(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
		tb.Fatal(err)
	}
	return now.UTC()
}

// exec runs sql on s's pool, with s's table for {t}, and fails the test on
// an error: the tests' way to move a record's instants by hand.
func exec(tb testing.TB, s *Store, sql string, args ...any) {
	tb.Helper()
	if _, err := s.pool.Exec(context.Background(), strings.ReplaceAll(sql, "{t}", s.Table()), args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
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
