package postgres

import "strings"

// queries holds the statements of one Store, with its table name in place.
// They are built once so that pgx's statement cache sees the same text on
// every call and prepares each statement once per connection.
type queries struct {
	insert, claim, resolve, lookup, load, listOpen, expire string
}

const resolveSQL = `UPDATE {t} SET
	state = CASE WHEN $4 = 'open' THEN state ELSE $4 END,
	updated_at = $5,
	lease_owner = '',
	lease_until = NULL,
	provider_ref = CASE WHEN $6 = '' THEN provider_ref ELSE $6 END,
	result = CASE WHEN $7::boolean THEN $8 ELSE result END
WHERE namespace = $1 AND intent_id = $2 AND key = $3
	AND state IN ('open', 'pending')
	AND ($9::text = '' OR lease_owner = $9::text)`

// relaxedResolveSQL is resolveSQL committed without waiting for the WAL
// flush. The KeyStore contract lets Resolve be lost in a crash (the intent
// reopens and is resumed with the same key, which the provider answers
// with a replay), so only Reserve needs to pay for an fsync: one per charge
// instead of two. set_config(..., true) lasts until the end of the
// statement's own implicit transaction, whose commit reads it; the CTE is
// MATERIALIZED and referenced so that the planner evaluates it once, before
// the update, as a one-time filter.
const relaxedResolveSQL = `WITH relaxed AS MATERIALIZED (
	SELECT set_config('synchronous_commit', 'off', true)
)
` + resolveSQL + `
	AND EXISTS (SELECT FROM relaxed)`

// The lease of a record may be taken when the record is unsettled and the
// lease is free (no owner), already ours, or over. It is over at LeaseUntil
// itself, judged on the caller's clock ($5, the Record's UpdatedAt), so a
// crashed owner is taken over without waiting an extra tick; the
// conformance suite checks that instant. A NULL lease_until with an owner
// cannot be written by Reserve's callers in practice, but counts as over.
const claimable = `cur.state IN ('open', 'pending')
		AND (cur.lease_owner = '' OR cur.lease_owner = $3
			OR cur.lease_until IS NULL OR cur.lease_until <= $5)`

func buildQueries(table string, durableResolve bool) queries {
	r := strings.NewReplacer("{t}", table, "{cols}", columnList(""),
		"{cur}", columnList("cur"), "{rec}", columnList("rec"), "{claimable}", claimable)
	resolve := relaxedResolveSQL
	if durableResolve {
		resolve = resolveSQL
	}
	return queries{
		// Reserve, first round trip: insert if absent. RETURNING yields a
		// row only when this call inserted, which is exactly Created.
		insert: r.Replace(`INSERT INTO {t} ({cols})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (namespace, intent_id) DO NOTHING
RETURNING {cols}`),

		// Reserve, second round trip, only when the record exists: take
		// the lease if it is claimable, else read the record, in one
		// statement. The row is locked first (cur) so that, under READ
		// COMMITTED, the decision and the returned row are the latest
		// committed version, not the one of this statement's snapshot: a
		// plain SELECT beside the UPDATE could return a record that a
		// concurrent Resolve had already closed.
		claim: r.Replace(`WITH cur AS (
	SELECT {cols} FROM {t}
	WHERE namespace = $1 AND intent_id = $2
	FOR NO KEY UPDATE
), claimed AS (
	UPDATE {t} AS rec SET lease_owner = $3, lease_until = $4, updated_at = $5
	FROM cur
	WHERE rec.namespace = cur.namespace AND rec.intent_id = cur.intent_id
		AND {claimable}
	RETURNING {rec}
)
SELECT {cols}, true FROM claimed
UNION ALL
SELECT {cols}, false FROM cur WHERE NOT EXISTS (SELECT 1 FROM claimed)`),

		// Resolve: one conditional update. A row is changed only if it
		// exists, carries the caller's key, is unsettled and, when the
		// caller names a lease owner ($9), is leased to that owner, so
		// there is no window between checking and writing. StateOpen keeps the
		// stored state (a pending record stays pending) and only releases
		// the lease.
		resolve: r.Replace(resolve),

		// Resolve's failure path only: why did the update match nothing?
		lookup: r.Replace(`SELECT key, state, lease_owner FROM {t} WHERE namespace = $1 AND intent_id = $2`),

		load: r.Replace(`SELECT {cols} FROM {t} WHERE namespace = $1 AND intent_id = $2`),

		// The WHERE repeats the partial index's predicate word for word so
		// the planner can use it.
		listOpen: r.Replace(`SELECT {cols} FROM {t}
WHERE namespace = $1 AND state IN ('open', 'pending')
ORDER BY created_at, intent_id
LIMIT $2`),

		// One bounded batch of Expire. SKIP LOCKED leaves rows that a
		// concurrent Reserve is reading (it locks them) for the next sweep
		// instead of waiting on them.
		expire: r.Replace(`WITH doomed AS (
	SELECT namespace, intent_id FROM {t}
	WHERE state IN ('succeeded', 'failed') AND created_at < $1
	ORDER BY created_at
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)
DELETE FROM {t} AS rec USING doomed
WHERE rec.namespace = doomed.namespace AND rec.intent_id = doomed.intent_id`),
	}
}
