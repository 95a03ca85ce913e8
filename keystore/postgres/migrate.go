package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// advisoryLockClass is the first key of the advisory lock taken while
// migrating; the second is a hash of the schema name. A fixed class keeps
// idempay's locks apart from the application's own advisory locks.
const advisoryLockClass = 0x1de9a7

// Migrate brings the schema up to SchemaVersion. It is idempotent and safe to
// run from many processes at once: everything happens in one transaction
// holding an advisory lock on the schema, so concurrent callers wait for the
// first and then find nothing to apply. A database at a newer version than
// this package knows is left alone, so an older instance keeps running during
// a rolling deploy (migrations are written to be backward compatible).
//
// Migration 2 adds columns, stamps the closing time of every settled row
// and rebuilds the two partial indexes, holding the table's lock until it
// commits: on a table of millions of settled rows, run it from a deploy
// step (Store.Migrate, then WithoutMigration in the service) at a quiet
// time.
//
// New calls Migrate unless WithoutMigration is given.
func (s *Store) Migrate(ctx context.Context) error {
	return s.migrateTo(ctx, SchemaVersion)
}

// migrateTo applies the migrations after the database's version up to
// target, in one transaction under the advisory lock.
func (s *Store) migrateTo(ctx context.Context, target int) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	// Rollback after a successful Commit is a no-op.
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, lockSQL, int32(advisoryLockClass), s.cfg.schema); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	if err := s.ensureSchema(ctx, tx); err != nil {
		return err
	}
	current, err := s.currentVersion(ctx, tx)
	if err != nil {
		return err
	}
	if err := s.apply(ctx, tx, current, target); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	return nil
}

// ensureSchema creates the schema if it is missing. CREATE SCHEMA IF NOT
// EXISTS still demands the CREATE privilege on the database, which a
// service role often lacks even when the schema is already there; so look
// first and create only when it is missing.
func (s *Store) ensureSchema(ctx context.Context, tx pgx.Tx) error {
	var exists bool
	if err := tx.QueryRow(ctx, schemaExistsSQL, s.cfg.schema).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{s.cfg.schema}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: migrate: create schema: %w", err)
	}
	return nil
}

// currentVersion creates the version table if needed and returns the
// highest version applied, 0 for none.
func (s *Store) currentVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	if _, err := tx.Exec(ctx, strings.ReplaceAll(versionTableSQL, "{v}", s.versions())); err != nil {
		return 0, fmt.Errorf("postgres: migrate: version table: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, strings.ReplaceAll(versionSQL, "{v}", s.versions())).Scan(&current); err != nil {
		return 0, fmt.Errorf("postgres: migrate: read version: %w", err)
	}
	return current, nil
}

// apply runs the migrations after current up to target and records each.
func (s *Store) apply(ctx context.Context, tx pgx.Tx, current, target int) error {
	names := s.names()
	record := strings.ReplaceAll(recordVersionSQL, "{v}", s.versions())
	for _, m := range migrations {
		if m.version <= current || m.version > target {
			continue
		}
		if _, err := tx.Exec(ctx, names.Replace(m.sql)); err != nil {
			return fmt.Errorf("postgres: migrate to version %d: %w", m.version, err)
		}
		if _, err := tx.Exec(ctx, record, m.version, m.description); err != nil {
			return fmt.Errorf("postgres: migrate to version %d: %w", m.version, err)
		}
	}
	return nil
}

// versions is the quoted, schema-qualified name of the version table.
func (s *Store) versions() string {
	return pgx.Identifier{s.cfg.schema, s.cfg.table + "_schema_version"}.Sanitize()
}

// names fills in the migrations' placeholders: {table} and {schema},
// quoted; the indexes, trigger and function derived from the table's name
// (unqualified: PostgreSQL creates an index or a trigger beside its table,
// so only DROP INDEX needs {schema}); {closed_fn} qualified, because a
// function is created on the search path otherwise. Version 1's placeholders
// keep their meaning for ever, since its text is never edited.
func (s *Store) names() *strings.Replacer {
	derived := func(suffix string) string { return pgx.Identifier{s.cfg.table + suffix}.Sanitize() }
	return strings.NewReplacer(
		"{table}", s.table,
		"{schema}", pgx.Identifier{s.cfg.schema}.Sanitize(),
		"{open_idx}", derived("_open_idx"),
		"{closed_idx}", derived("_closed_idx"),
		"{open_c_idx}", derived("_open_c_idx"),
		"{closed_at_idx}", derived("_closed_at_idx"),
		"{closed_trg}", derived("_closed_at_trg"),
		"{closed_fn}", pgx.Identifier{s.cfg.schema, s.cfg.table + "_closed_at"}.Sanitize(),
	)
}
