package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migration is one versioned change to the schema. Applied migrations are
// never edited: a change is a new migration with the next version, so that
// every instance of a fleet converges on the same schema whatever version it
// started from.
type migration struct {
	version     int
	description string
	sql         string // {table}, {open_idx}, {closed_idx} are replaced
}

var migrations = []migration{
	{
		version:     1,
		description: "records table with partial indexes for ListOpen and Expire",
		sql: `
CREATE TABLE {table} (
	namespace    text        NOT NULL,
	intent_id    text        NOT NULL,
	key          text        NOT NULL,
	fingerprint  text        NOT NULL,
	state        text        NOT NULL
		CHECK (state IN ('open', 'pending', 'succeeded', 'failed')),
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	lease_owner  text        NOT NULL DEFAULT '',
	lease_until  timestamptz,
	provider_ref text        NOT NULL DEFAULT '',
	result       bytea,
	PRIMARY KEY (namespace, intent_id)
);
-- ListOpen reads the unsettled intents of one namespace, oldest first. Only
-- open and pending rows are indexed, so the index stays as small as the set
-- of charges in flight however many settled rows the table keeps.
CREATE INDEX {open_idx} ON {table} (namespace, created_at, intent_id)
	WHERE state IN ('open', 'pending');
-- Expire deletes settled rows by creation time in small batches; without
-- this index each batch would scan the table.
CREATE INDEX {closed_idx} ON {table} (created_at)
	WHERE state IN ('succeeded', 'failed');
`,
	},
}

// SchemaVersion is the schema version this package creates and expects: the
// version of the last entry of migrations (a test keeps the two equal).
const SchemaVersion = 1

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
// New calls Migrate unless WithoutMigration is given.
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	// Rollback after a successful Commit is a no-op.
	defer func() { _ = tx.Rollback(ctx) }()

	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`,
		int32(advisoryLockClass), s.cfg.schema); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}

	// CREATE SCHEMA IF NOT EXISTS still demands the CREATE privilege on the
	// database, which a service role often lacks even when the schema is
	// already there; so look first and create only when it is missing.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`,
		s.cfg.schema).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{s.cfg.schema}.Sanitize()); err != nil {
			return fmt.Errorf("postgres: migrate: create schema: %w", err)
		}
	}

	versions := pgx.Identifier{s.cfg.schema, s.cfg.table + "_schema_version"}.Sanitize()
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+versions+` (
	version     integer     PRIMARY KEY,
	description text        NOT NULL,
	applied_at  timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("postgres: migrate: version table: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+versions).Scan(&current); err != nil {
		return fmt.Errorf("postgres: migrate: read version: %w", err)
	}

	repl := strings.NewReplacer(
		"{table}", s.table,
		"{open_idx}", pgx.Identifier{s.cfg.table + "_open_idx"}.Sanitize(),
		"{closed_idx}", pgx.Identifier{s.cfg.table + "_closed_idx"}.Sanitize(),
	)
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		if _, err := tx.Exec(ctx, repl.Replace(m.sql)); err != nil {
			return fmt.Errorf("postgres: migrate to version %d: %w", m.version, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+versions+` (version, description) VALUES ($1, $2)`,
			m.version, m.description); err != nil {
			return fmt.Errorf("postgres: migrate to version %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	return nil
}
