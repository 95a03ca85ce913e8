package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestExpireDeletesInBatches fills the table with 2,500 records settled
// long ago and some unsettled ones, and checks that Expire deletes every
// old settled one and nothing else, with DELETEs of at most the batch size.
func TestExpireDeletesInBatches(t *testing.T) {
	const (
		closed = 2500
		open   = 7
		batch  = 1000
	)
	s, m := meteredStore(t, WithExpireBatch(batch))
	ctx := t.Context()

	// Bulk-insert directly: 2,500 Reserve+Resolve pairs would measure the
	// driver, not the sweep. Closing times are spread over the day before
	// the retention; half succeeded, half failed.
	exec(t, s, `INSERT INTO {t}
		(namespace, intent_id, key, fingerprint, state, created_at, updated_at, closed_at, result)
	SELECT 'ns' || (i % 3), 'closed-' || i, 'key-' || i, 'fp',
		CASE WHEN i % 2 = 0 THEN 'succeeded' ELSE 'failed' END,
		now() - interval '30 days', now() - interval '8 days' - make_interval(secs => i),
		now() - interval '8 days' - make_interval(secs => i), '\x00'::bytea
	FROM generate_series(1, $1::int) AS i`, closed)
	for i := range open {
		id := "open-" + string(rune('a'+i))
		reserve(t, s, request("ns0", id))
		if i%2 == 1 {
			resolve(t, s, "ns0", id, idempay.StatePending)
		}
	}
	// Open for a year: never deleted, however old.
	exec(t, s, `UPDATE {t} SET created_at = now() - interval '1 year', updated_at = now() - interval '1 year'
		WHERE intent_id LIKE 'open-%'`)
	// Created long ago, settled just now: kept, retention runs from closing.
	reserve(t, s, request("ns0", "late"))
	resolve(t, s, "ns0", "late", idempay.StateSucceeded)
	exec(t, s, `UPDATE {t} SET created_at = now() - interval '30 days' WHERE intent_id = 'late'`)

	m.reset()
	n, err := s.Expire(ctx, 7*24*time.Hour)
	if err != nil || n != closed {
		t.Fatalf("Expire = %d, %v; want %d and no error", n, err, closed)
	}
	m.mu.Lock()
	affected := append([]int64(nil), m.affected...)
	m.mu.Unlock()
	want := []int64{batch, batch, closed - 2*batch}
	if len(affected) != len(want) {
		t.Fatalf("Expire ran %d statements deleting %v; want %d batches deleting %v", len(affected), affected, len(want), want)
	}
	for i := range want {
		if affected[i] != want[i] {
			t.Errorf("batch %d deleted %d rows; want %d (all batches: %v)", i, affected[i], want[i], affected)
		}
	}

	var left, leftOpen int
	if err := s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state IN ('open', 'pending')) FROM `+
		s.Table()).Scan(&left, &leftOpen); err != nil {
		t.Fatal(err)
	}
	if left != open+1 || leftOpen != open {
		t.Errorf("after Expire: %d rows of which %d unsettled; want %d rows: the %d open or pending ones and the one settled late",
			left, leftOpen, open+1, open)
	}
}

// TestExpireFromClosing checks the retention's edge on the server's clock:
// a record closed just over the retention ago goes, one closed just under
// it stays, whatever their creation times.
func TestExpireFromClosing(t *testing.T) {
	s := openStore(t)
	for _, id := range []string{"old", "young"} {
		reserve(t, s, request("ns", id))
		resolve(t, s, "ns", id, idempay.StateFailed)
	}
	exec(t, s, `UPDATE {t} SET created_at = now() - interval '10 days',
		closed_at = CASE intent_id WHEN 'old' THEN now() - interval '1 hour 1 second'
			ELSE now() - interval '59 minutes' END`)
	if n, err := s.Expire(t.Context(), time.Hour); err != nil || n != 1 {
		t.Fatalf("Expire(1h) = %d, %v; want 1", n, err)
	}
	if _, err := s.Load(t.Context(), "ns", "young"); err != nil {
		t.Errorf("the record closed 59 minutes ago: Load = %v; want it kept", err)
	}
}

// explain returns the plan of sql in a transaction that forbids sequential
// scans: a tiny table is cheapest to scan, and the point is that an index
// plan exists, which is what a large table will use.
func explain(t *testing.T, s *Store, sql string, args ...any) string {
	t.Helper()
	ctx := t.Context()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("EXPLAIN: %v", err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// TestQueriesUseIndexes checks, with the planner's own words, that a sweep
// batch reads the partial index on closed_at, and that a ListOpen page reads
// the partial index on unsettled rows from the cursor on (an Index Cond on
// the row comparison) without sorting.
func TestQueriesUseIndexes(t *testing.T) {
	s := openStore(t)
	cursor := []any{"ns", time.Now(), "order-1", 10}
	for name, q := range map[string]struct {
		sql   string
		args  []any
		index string
		want  []string
	}{
		"Expire":   {s.q.expire, []any{int64(1e6), 1000}, "idempay_records_closed_at_idx", []string{"Index Cond: (closed_at <"}},
		"ListOpen": {s.q.listOpen, cursor, "idempay_records_open_c_idx", []string{"Index Cond: ((namespace = ", "ROW(created_at, (intent_id)::text) >"}},
	} {
		plan := explain(t, s, q.sql, q.args...)
		if !strings.Contains(plan, q.index) || strings.Contains(plan, "Sort") {
			t.Errorf("plan of %s does not read %s, or sorts:\n%s", name, q.index, plan)
		}
		for _, w := range q.want {
			if !strings.Contains(plan, w) {
				t.Errorf("plan of %s lacks %q:\n%s", name, w, plan)
			}
		}
	}
}
