package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay"
)

var _ idempay.KeyStore = (*Store)(nil)

// Store is an idempay.KeyStore in a PostgreSQL table. It is safe for
// concurrent use by many goroutines and many processes sharing the table.
// Build one with New or Open; the zero Store is not usable.
type Store struct {
	pool  *pgxpool.Pool
	owned bool // Open made the pool, so Close closes it
	cfg   config
	table string // schema-qualified, quoted table name
	q     queries
}

// New returns a Store using pool and, unless WithoutMigration is given,
// creates or upgrades its table (see Store.Migrate). The caller keeps
// ownership of pool: Close does not close it.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: nil pool")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Store{
		pool:  pool,
		cfg:   cfg,
		table: pgx.Identifier{cfg.schema, cfg.table}.Sanitize(),
	}
	s.q = buildQueries(s.table)
	if cfg.migrate {
		if err := s.Migrate(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Open connects to the database at dsn (a PostgreSQL URL or key=value
// string, as pgxpool.ParseConfig accepts) and returns a Store that owns the
// pool: Close closes it.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close closes the pool if the Store was made by Open, and does nothing if
// it was made by New (the pool is the caller's).
func (s *Store) Close() {
	if s.owned {
		s.pool.Close()
	}
}

// Table returns the schema-qualified, quoted name of the records table, for
// operators' queries and tests.
func (s *Store) Table() string { return s.table }

// Load returns the record of an intent, or an error matching
// idempay.ErrNotFound.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	r, err := scanRecord(s.pool.QueryRow(ctx, s.q.load, namespace, intentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return idempay.Record{}, fmt.Errorf("postgres: load %q/%q: %w", namespace, intentID, idempay.ErrNotFound)
	}
	if err != nil {
		return idempay.Record{}, fmt.Errorf("postgres: load: %w", err)
	}
	return r, nil
}
