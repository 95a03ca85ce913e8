package postgres

// migration is one versioned change to the schema. Applied migrations are
// never edited (a test pins their text): a change is a new migration with
// the next version, so that every instance of a fleet converges on the same
// schema whatever version it started from. Each is written so that binaries
// of the previous version keep working on the new schema during a rolling
// deploy: columns are added with defaults, nothing they read is removed.
type migration struct {
	version     int
	description string
	sql         string // placeholders: see Store.names
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
	{
		version:     2,
		description: "attempts, creator, history, closed_at; retention from closing; bytewise ListOpen order",
		sql: `
-- The columns of contract v2. Constant defaults make ADD COLUMN a catalogue
-- change, not a rewrite; every existing row is attempt 1 with no history,
-- and its creator unknown (''), which only means that a Reserve repeated
-- after a lost reply to a version-1 insert is not told Created.
--
-- history is jsonb, not bytea holding JSON: beginning an attempt appends
-- the replaced one in the same statement (history || ...), built by the
-- server from the row, so it needs no read first and no extra round trip;
-- and an operator can read or query it in psql.
ALTER TABLE {table}
	ADD COLUMN attempt   integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),
	ADD COLUMN closed_at timestamptz,
	ADD COLUMN creator   text        NOT NULL DEFAULT '',
	ADD COLUMN history   jsonb       NOT NULL DEFAULT '[]'
		CHECK (jsonb_typeof(history) = 'array');

-- Retention runs from closing. Version 1 never changes a settled row, so a
-- row settled before this migration closed at its last update. This
-- rewrites the settled rows once, inside the migration's transaction.
UPDATE {table} SET closed_at = updated_at WHERE state IN ('succeeded', 'failed');

-- A version-1 binary still running during a rolling deploy closes records
-- without knowing closed_at; this trigger stamps it, on the server's clock,
-- so that those records expire too (and so does a row an operator closes
-- by hand). Its WHEN clause makes it free for the statements of this
-- package, which always set closed_at themselves.
CREATE FUNCTION {closed_fn}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.closed_at := now();
	RETURN NEW;
END
$$;
CREATE TRIGGER {closed_trg} BEFORE INSERT OR UPDATE OF state ON {table}
	FOR EACH ROW WHEN (NEW.state IN ('succeeded', 'failed') AND NEW.closed_at IS NULL)
	EXECUTE FUNCTION {closed_fn}();

-- ListOpen pages by (created_at, intent_id) with intent IDs in bytewise
-- order, as Go compares them; the database's collation may order "B" after
-- "a". The index is rebuilt with COLLATE "C" so that the keyset comparison
-- and the ORDER BY of ListOpen can read it from the cursor on.
DROP INDEX {schema}.{open_idx};
CREATE INDEX {open_c_idx} ON {table} (namespace, created_at, intent_id COLLATE "C")
	WHERE state IN ('open', 'pending');

-- Expire selects by closed_at now. Neither index mentions updated_at,
-- lease_owner or lease_until, so a lease renewal stays a HOT update.
DROP INDEX {schema}.{closed_idx};
CREATE INDEX {closed_at_idx} ON {table} (closed_at)
	WHERE state IN ('succeeded', 'failed');
`,
	},
}

// SchemaVersion is the schema version this package creates and expects: the
// version of the last entry of migrations (a test keeps the two equal).
const SchemaVersion = 2
