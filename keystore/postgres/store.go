package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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
	s.q = buildQueries(s.table, cfg.durableResolve)
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

// columns is the order in which every statement returns a record.
var columns = []string{
	"namespace", "intent_id", "key", "fingerprint", "state", "created_at",
	"updated_at", "lease_owner", "lease_until", "provider_ref", "result",
}

func columnList(alias string) string {
	if alias == "" {
		return strings.Join(columns, ", ")
	}
	return alias + "." + strings.Join(columns, ", "+alias+".")
}

// scanRecord reads the columns of one record, then extra.
func scanRecord(row pgx.Row, extra ...any) (idempay.Record, error) {
	var (
		r          idempay.Record
		state      string
		leaseUntil pgtype.Timestamptz
	)
	dest := append([]any{
		&r.Namespace, &r.IntentID, &r.Key, &r.Fingerprint, &state, &r.CreatedAt,
		&r.UpdatedAt, &r.LeaseOwner, &leaseUntil, &r.ProviderRef, &r.Result,
	}, extra...)
	if err := row.Scan(dest...); err != nil {
		return idempay.Record{}, err
	}
	r.State = idempay.State(state)
	// pgx returns timestamptz in the local zone; UTC makes records read on
	// two machines with different zones compare and print the same.
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	if leaseUntil.Valid {
		r.LeaseUntil = leaseUntil.Time.UTC()
	}
	return r, nil
}

// nullTime maps the zero time to NULL, the column's "no lease".
func nullTime(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// Load returns the record of an intent, or idempay.ErrNotFound.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	r, err := scanRecord(s.pool.QueryRow(ctx, s.q.load, namespace, intentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return idempay.Record{}, idempay.ErrNotFound
	}
	if err != nil {
		return idempay.Record{}, fmt.Errorf("postgres: load: %w", err)
	}
	return r, nil
}

// ListOpen returns up to limit open or pending records of namespace, oldest
// first (ties by intent ID); limit <= 0 means all. It reads the partial index
// on unsettled rows only.
func (s *Store) ListOpen(ctx context.Context, namespace string, limit int) ([]idempay.Record, error) {
	var lim *int64 // NULL: LIMIT NULL is no limit
	if limit > 0 {
		n := int64(limit)
		lim = &n
	}
	rows, err := s.pool.Query(ctx, s.q.listOpen, namespace, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: list open: %w", err)
	}
	defer rows.Close()
	var out []idempay.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list open: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list open: %w", err)
	}
	return out, nil
}
