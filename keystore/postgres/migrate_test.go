package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay"
)

func TestSchemaVersionIsLastMigration(t *testing.T) {
	if last := migrations[len(migrations)-1].version; SchemaVersion != last {
		t.Errorf("SchemaVersion = %d; the last migration is version %d", SchemaVersion, last)
	}
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migrations[%d].version = %d; want %d: versions are consecutive from 1", i, m.version, i+1)
		}
	}
}

// allVersions is every version of migrations, in order.
func allVersions() []int {
	var v []int
	for _, m := range migrations {
		v = append(v, m.version)
	}
	return v
}

// TestAppliedMigrationsUnchanged pins the text of every released migration:
// a database that applied it must find the same schema in the code. A change
// to the schema is a new migration, never an edit of an old one.
func TestAppliedMigrationsUnchanged(t *testing.T) {
	released := map[int]string{
		1: "79083e75de262e3077c8af478c98113bfc17e52d3bc7bb19740971209e7d85bd",
		2: "f9cfe99b8a023097c49214fcb5ade71315132baa4141f9c96bbb420b5872d143",
	}
	for _, m := range migrations {
		want, ok := released[m.version]
		if !ok {
			continue // not released yet: pin it here once it is
		}
		if got := fmt.Sprintf("%x", sha256.Sum256([]byte(m.sql))); got != want {
			t.Errorf("migration %d has been edited (sha256 %s, released as %s); add a new migration instead", m.version, got, want)
		}
	}
}

// versionsApplied returns the versions recorded in the store's version table.
func versionsApplied(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.pool.Query(t.Context(), `SELECT version FROM `+
		strings.TrimSuffix(s.table, `"`)+`_schema_version" ORDER BY version`)
	if err != nil {
		t.Fatalf("read version table: %v", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateConcurrently starts four stores on one new schema at once, as a
// fleet does after a deploy: every one must come up, and the migration must
// be recorded once.
func TestMigrateConcurrently(t *testing.T) {
	pool := newPool(t, poolConfig(t))
	schema := freshSchema(t, pool)

	const instances = 4
	stores := make([]*Store, instances)
	errs := make([]error, instances)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range instances {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = New(t.Context(), pool, WithSchema(schema))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: New = %v; want every concurrent start to succeed", i, err)
		}
	}
	if got := versionsApplied(t, stores[0]); !slices.Equal(got, allVersions()) {
		t.Errorf("versions recorded after %d concurrent starts = %v; want %v", instances, got, allVersions())
	}

	// Every instance writes to the same table.
	for i, s := range stores {
		reserve(t, s, request("ns", string(rune('a'+i))))
	}
	if open, err := stores[0].ListOpen(t.Context(), "ns", idempay.Cursor{}, 100); err != nil || len(open) != instances {
		t.Errorf("ListOpen = %d records, %v; want %d, one per instance", len(open), err, instances)
	}
}

// TestMigrateIdempotent runs Migrate again on a migrated schema and checks
// that it changes nothing and keeps the data.
func TestMigrateIdempotent(t *testing.T) {
	s := openStore(t)
	reserve(t, s, request("ns", "kept"))
	for range 3 {
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate on a migrated schema = %v; want nil", err)
		}
	}
	if got := versionsApplied(t, s); !slices.Equal(got, allVersions()) {
		t.Errorf("versions recorded = %v; want %v, each once", got, allVersions())
	}
	if _, err := s.Load(t.Context(), "ns", "kept"); err != nil {
		t.Errorf("Load after repeated Migrate = %v; want the record kept", err)
	}
}

// TestTablesInOneSchemaAreIndependent checks that two table names in one
// schema are two stores, each with its own version table and indexes.
func TestTablesInOneSchemaAreIndependent(t *testing.T) {
	pool := newPool(t, poolConfig(t))
	schema := freshSchema(t, pool)
	a, err := New(t.Context(), pool, WithSchema(schema), WithTable("keys_a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(t.Context(), pool, WithSchema(schema), WithTable("keys_b"))
	if err != nil {
		t.Fatal(err)
	}
	reserve(t, a, request("ns", "x"))
	if got, err := b.Reserve(t.Context(), request("ns", "x")); err != nil || !got.Created {
		t.Errorf("Reserve in table keys_b of an intent that only keys_a has: Created=%v, %v; want Created", got.Created, err)
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := map[string]Option{
		"empty schema":         WithSchema(""),
		"quoted schema":        WithSchema(`a"; DROP TABLE x; --`),
		"upper-case table":     WithTable("Keys"),
		"table with a dot":     WithTable("public.keys"),
		"table starting digit": WithTable("1keys"),
		"table too long":       WithTable(strings.Repeat("k", maxTableLen+1)),
		"zero batch":           WithExpireBatch(0),
	}
	for name, opt := range bad {
		// No pool is touched: options are checked before anything else.
		if _, err := New(context.Background(), new(pgxpool.Pool), opt); err == nil {
			t.Errorf("%s: New = nil error; want the option refused", name)
		}
	}
	if _, err := New(context.Background(), nil); err == nil {
		t.Error("New(nil pool) = nil error; want an error")
	}
}
