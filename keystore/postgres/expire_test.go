package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestExpireDeletesInBatches fills the table with 2,500 settled records and
// some unsettled ones, all old, and checks that Expire deletes every settled
// one and nothing else, with DELETEs of at most the batch size.
func TestExpireDeletesInBatches(t *testing.T) {
	const (
		closed = 2500
		open   = 7
		batch  = 1000
	)
	s, m := meteredStore(t, WithExpireBatch(batch))
	ctx := t.Context()

	// Bulk-insert directly: 2,500 Reserve+Resolve pairs would measure the
	// driver, not the sweep. Created times are spread over a day before
	// the cutoff; half succeeded, half failed.
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.Table()+`
		(namespace, intent_id, key, fingerprint, state, created_at, updated_at, result)
	SELECT 'ns' || (i % 3), 'closed-' || i, 'key-' || i, 'fp', 
		CASE WHEN i % 2 = 0 THEN 'succeeded' ELSE 'failed' END,
		$1::timestamptz - make_interval(secs => i), $1, '\x00'::bytea
	FROM generate_series(1, $2::int) AS i`, at, closed)
	if err != nil {
		t.Fatalf("insert settled records: %v", err)
	}
	for i := range open {
		r := record("ns0", "open-"+string(rune('a'+i)))
		r.CreatedAt = at.AddDate(-1, 0, 0)
		if _, err := s.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := s.Resolve(ctx, idempay.Resolution{Namespace: r.Namespace, IntentID: r.IntentID,
				Key: r.Key, State: idempay.StatePending, At: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One settled record at the cutoff itself stays: the cutoff is strict.
	young := record("ns0", "young")
	young.CreatedAt = at.Add(time.Second)
	if _, err := s.Reserve(ctx, young); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(ctx, idempay.Resolution{Namespace: "ns0", IntentID: "young", Key: young.Key,
		State: idempay.StateSucceeded, At: at}); err != nil {
		t.Fatal(err)
	}

	m.reset()
	n, err := s.Expire(ctx, young.CreatedAt)
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
		t.Errorf("after Expire: %d rows of which %d unsettled; want %d rows: the %d open or pending ones and the one created at the cutoff",
			left, leftOpen, open+1, open)
	}
}

// TestExpireUsesClosedIndex checks, with the planner's own words, that a
// sweep batch reads the partial index on settled rows rather than scanning
// the table, and that ListOpen reads the one on unsettled rows.
func TestExpireUsesClosedIndex(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// A tiny table is cheapest to scan, so forbid that plan: the point is
	// that an index plan exists, which is what a large table will use.
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]struct {
		sql   string
		args  []any
		index string
	}{
		"Expire":   {s.q.expire, []any{at, 1000}, "idempay_records_closed_idx"},
		"ListOpen": {s.q.listOpen, []any{"ns", 10}, "idempay_records_open_idx"},
	} {
		var plan string
		rows, err := tx.Query(ctx, "EXPLAIN "+q.sql, q.args...)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", name, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan += line + "\n"
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, q.index) {
			t.Errorf("plan of %s does not use %s:\n%s", name, q.index, plan)
		}
	}
}
