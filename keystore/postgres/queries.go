package postgres

import (
	"fmt"
	"strings"
)

// queries holds the statements of one Store, with its table name in place.
// They are built once so that pgx's statement cache sees the same text on
// every call and prepares each statement once per connection.
type queries struct {
	insert, claim, resolve, load, listOpen, expire string
}

// Every statement that writes a record stamps it with one instant of the
// server's clock, never the caller's: instances of a fleet disagree about
// the time, the server is the one clock they all share. timestamptz keeps
// microseconds, so every instant is read back exactly as it was written.
//
// Durations (the lease, the retention) are passed as whole microseconds,
// rounded up by the Go side (a lease or a retention is never shortened),
// and turned into an interval by this exact multiplication.
const micros = `* interval '1 microsecond'`

// durableSetting is the synchronous_commit a durable commit runs under: at
// least on, which waits for the local WAL flush and for the synchronous
// standbys' flush, if any are configured (without them it costs what local
// costs). A session's off, local or remote_write is raised to on, since a
// key lost in a failover to a standby is as lost as one lost in a crash;
// remote_apply, stronger still, is kept.
const durableSetting = `CASE WHEN current_setting('synchronous_commit') = 'remote_apply' THEN 'remote_apply'
		ELSE 'on' END`

// The durability of a statement's commit is chosen by the statement itself,
// not by the role, the database or the session: set_config(..., true) lasts
// until the end of the statement's own implicit transaction, whose commit
// reads it, and then the connection is back to its own setting. The CTE is
// MATERIALIZED and joined into every write, so no row is written unless it
// has run. {durable} is the value to set.
const durableCTE = `durable AS MATERIALIZED (
	SELECT set_config('synchronous_commit', {durable}, true)
)`

// insertSQL is Reserve's first round trip: the record as a new attempt
// r.Attempt, unless a record exists. RETURNING yields a row only when this
// call inserted, which is exactly "Created and Claimed". now() is the start
// of the statement's transaction, later than the caller's send, so the lease
// never ends before the caller's own reckoning of it. The commit always
// waits for the flush (durableSetting): the key must be on disk before the
// first byte carrying it is sent, whatever the role's defaults say.
// {probe} is empty but in tests, as in resolveSQL.
const insertSQL = `WITH ` + durableCTE + `
INSERT INTO {t} AS rec (namespace, intent_id, attempt, key, fingerprint, state,
	created_at, updated_at, creator, lease_owner, lease_until)
SELECT $1::text, $2::text, $3::integer, $4::text, $5::text, 'open',
	now(), now(), $6::text, $6::text, now() + $7::bigint ` + micros + `
FROM durable
ON CONFLICT (namespace, intent_id) DO NOTHING
RETURNING {rec}, now(), true{probe}`

// claimSQL is Reserve's second round trip, only when the record exists: it
// begins a new attempt, takes the lease or reads the record, in one
// statement. The row is locked first (cur) so that, under READ COMMITTED,
// the decision and the returned row are the latest committed version, not
// the one of this statement's snapshot: a plain SELECT beside the UPDATE
// could return a record that a concurrent Resolve had already closed.
//
// The clock is read after the lock (clock scans cur): a Reserve that waited
// for another's statement judges the lease, and stamps the record, at the
// instant it decides, so the instants of one record never go back.
//
// begun and claimed exclude each other (a failed record is never
// claimable), so at most one of them writes the row.
const claimSQL = `WITH cur AS (
	SELECT {cols} FROM {t}
	WHERE namespace = $1::text AND intent_id = $2::text
	FOR NO KEY UPDATE
), clock AS MATERIALIZED (
	SELECT clock_timestamp() AS now FROM cur
), ` + durableCTE + `, begun AS (
	UPDATE {t} AS rec SET
		attempt = $3::integer, key = $4::text, fingerprint = $5::text, state = 'open',
		created_at = clock.now, updated_at = clock.now, closed_at = NULL,
		creator = $6::text, lease_owner = $6::text, lease_until = clock.now + $7::bigint ` + micros + `,
		provider_ref = '', result = NULL,
		history = cur.history || jsonb_build_array(` + pastAttempt + `)
	FROM cur, clock, durable
	WHERE rec.namespace = cur.namespace AND rec.intent_id = cur.intent_id
		AND ` + beginsAttempt + `
	RETURNING {rec}, clock.now, true
), claimed AS (
	UPDATE {t} AS rec SET
		lease_owner = $6::text, lease_until = clock.now + $7::bigint ` + micros + `,
		updated_at = clock.now
	FROM cur, clock, durable
	WHERE rec.namespace = cur.namespace AND rec.intent_id = cur.intent_id
		AND ` + claimable + `
	RETURNING {rec}, clock.now, true
)
SELECT * FROM begun
UNION ALL
SELECT * FROM claimed
UNION ALL
SELECT {cur}, clock.now, false FROM cur, clock
WHERE NOT EXISTS (SELECT FROM begun) AND NOT EXISTS (SELECT FROM claimed)`

// beginsAttempt is idempay.Record.BeginsAttempt in SQL: a new attempt
// begins only over a failed record, and only the one that follows it, so
// two callers who both saw attempt 1 fail cannot both start attempt 2.
const beginsAttempt = `cur.state = 'failed' AND cur.attempt = $3::integer - 1`

// claimable is idempay.Record.ClaimableBy in SQL: the record is unsettled,
// carries the caller's fingerprint, and its lease is free, already the
// caller's, or over. It is over at LeaseUntil itself, on the server's clock,
// so a crashed holder is replaced without waiting an extra tick. A NULL
// lease_until beside an owner cannot be written by this package, but counts
// as over (an operator's hand edit must not lock an intent for ever).
const claimable = `cur.state IN ('open', 'pending') AND cur.fingerprint = $5::text
		AND (cur.lease_owner = '' OR cur.lease_owner = $6::text
			OR cur.lease_until IS NULL OR cur.lease_until <= clock.now)`

// pastAttempt is idempay.Record.Past as a JSON object, built by the server
// from the row being replaced, so that beginning an attempt needs no read
// first. Its keys are idempay.PastAttempt's JSON names; timestamptz becomes
// an ISO 8601 string with its offset, which time.Time parses; the result is
// base64 as encoding/json writes []byte (encode() breaks lines every 76
// characters, which translate takes out). Empty fields are left out like
// PastAttempt's omitempty fields. A record closed by a version-1 binary
// during a rolling deploy may lack closed_at; its updated_at is then when
// it closed.
const pastAttempt = `jsonb_strip_nulls(jsonb_build_object(
			'attempt', cur.attempt, 'key', cur.key, 'fingerprint', cur.fingerprint,
			'state', cur.state, 'created_at', cur.created_at,
			'closed_at', coalesce(cur.closed_at, cur.updated_at),
			'provider_ref', nullif(cur.provider_ref, ''),
			'result', translate(encode(cur.result, 'base64'), E'\n', '')))`

// resolveSQL is Resolve in one statement whatever the answer. The row is
// locked first (cur) and the update applies only if it carries the caller's
// key, is unsettled and, when the caller names a lease owner ($9), is
// leased to that owner, so there is no window between checking and
// writing; the statement returns what it checked, so a refused Resolve
// needs no second statement to say why. StateOpen keeps the stored state (a
// pending record stays pending) and only releases the lease. $8 chooses the
// commit: durable, or without waiting for the flush (a charge's outcome may
// be lost in a crash: the intent reopens and resuming it with the same key
// is answered by a replay, so only Reserve pays for an fsync). {probe} is
// empty but in tests, which read settings from inside the write.
const resolveSQL = `WITH cur AS (
	SELECT key, state, lease_owner FROM {t}
	WHERE namespace = $1::text AND intent_id = $2::text
	FOR NO KEY UPDATE
), clock AS MATERIALIZED (
	SELECT clock_timestamp() AS now FROM cur
), ` + durableCTE + `, done AS (
	UPDATE {t} AS rec SET
		state = CASE WHEN $4::text = 'open' THEN rec.state ELSE $4::text END,
		updated_at = clock.now,
		closed_at = CASE WHEN $4::text IN ('succeeded', 'failed') THEN clock.now END,
		lease_owner = '',
		lease_until = NULL,
		provider_ref = CASE WHEN $5::text = '' THEN rec.provider_ref ELSE $5::text END,
		result = CASE WHEN $6::boolean THEN $7::bytea ELSE rec.result END
	FROM cur, clock, durable
	WHERE rec.namespace = $1::text AND rec.intent_id = $2::text
		AND cur.key = $3::text AND cur.state IN ('open', 'pending')
		AND ($9::text = '' OR cur.lease_owner = $9::text)
	RETURNING true AS applied{probe}
)
SELECT cur.key, cur.state, cur.lease_owner, coalesce(done.applied, false){probed}
FROM cur LEFT JOIN done ON true`

// resolveDurability is the setting a Resolve commits under: $8 true is a
// durable close.
const resolveDurability = `CASE WHEN $8::boolean THEN ` + durableSetting + ` ELSE 'off' END`

const loadSQL = `SELECT {cols} FROM {t} WHERE namespace = $1 AND intent_id = $2`

// listOpenSQL is one keyset page. The WHERE repeats the partial index's
// predicate word for word so the planner can use it, and the row comparison
// and the ORDER BY follow the index's columns, so a page reads limit index
// entries however many open records come before the cursor. intent_id is
// compared and sorted COLLATE "C", bytewise like Go's strings (the index is
// built so): under a database's linguistic collation "B" sorts after "a",
// and a cursor compared one way over rows sorted the other skips records.
const listOpenSQL = `SELECT {cols} FROM {t}
WHERE namespace = $1::text AND state IN ('open', 'pending')
	AND (created_at, intent_id COLLATE "C") > ($2::timestamptz, $3::text COLLATE "C")
ORDER BY created_at, intent_id COLLATE "C"
LIMIT $4::bigint`

// expireSQL is one bounded batch of Expire: settled records closed more
// than $1 microseconds ago by the server's clock, oldest closing first,
// through the partial index on closed_at. SKIP LOCKED leaves rows that a
// concurrent Reserve or Resolve holds for the next sweep instead of waiting
// on them. Open and pending rows have no closed_at and are never selected.
const expireSQL = `WITH doomed AS (
	SELECT namespace, intent_id FROM {t}
	WHERE state IN ('succeeded', 'failed') AND closed_at < now() - $1::bigint ` + micros + `
	ORDER BY closed_at
	LIMIT $2::bigint
	FOR UPDATE SKIP LOCKED
)
DELETE FROM {t} AS rec USING doomed
WHERE rec.namespace = doomed.namespace AND rec.intent_id = doomed.intent_id`

// buildQueries fills in the table name, the column lists and the
// durability settings. Each expression of probe is evaluated by the writes
// of Resolve and of Reserve's insert, after the row is written, and added to
// their answers; probe is empty but in tests.
func buildQueries(table string, probe ...string) queries {
	var in, out strings.Builder
	for i, p := range probe {
		fmt.Fprintf(&in, ", %s AS probe_%d", p, i)
		fmt.Fprintf(&out, ", done.probe_%d", i)
	}
	inner := strings.NewReplacer("{durable}", durableSetting, "{probe}", in.String())
	resolve := strings.NewReplacer("{durable}", resolveDurability,
		"{probe}", in.String(), "{probed}", out.String())
	r := strings.NewReplacer("{t}", table, "{cols}", columnList(""),
		"{cur}", columnList("cur"), "{rec}", columnList("rec"))
	return queries{
		insert:   r.Replace(inner.Replace(insertSQL)),
		claim:    r.Replace(inner.Replace(claimSQL)),
		resolve:  r.Replace(resolve.Replace(resolveSQL)),
		load:     r.Replace(loadSQL),
		listOpen: r.Replace(listOpenSQL),
		expire:   r.Replace(expireSQL),
	}
}

// The migrator's own statements. The table names are put in by the caller
// ({v}: the version table).
const (
	// lockSQL serialises migrations of one schema across the fleet; the
	// lock ends with the migration's transaction.
	lockSQL = `SELECT pg_advisory_xact_lock($1, hashtext($2))`

	schemaExistsSQL = `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`

	versionTableSQL = `CREATE TABLE IF NOT EXISTS {v} (
	version     integer     PRIMARY KEY,
	description text        NOT NULL,
	applied_at  timestamptz NOT NULL DEFAULT now()
)`

	versionSQL = `SELECT coalesce(max(version), 0) FROM {v}`

	recordVersionSQL = `INSERT INTO {v} (version, description) VALUES ($1, $2)`
)
