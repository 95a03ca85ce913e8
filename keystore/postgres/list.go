package postgres

import (
	"context"
	"fmt"

	"github.com/idempay/idempay"
)

// ListOpen implements idempay.KeyStore: up to limit open or pending records
// of namespace after the cursor, in (CreatedAt, IntentID) order with intent
// IDs compared bytewise, as Go compares strings, whatever the database's
// collation. One statement per page, reading the partial index on
// unsettled rows from the cursor on.
func (s *Store) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("postgres: list open: limit %d is not positive", limit)
	}
	rows, err := s.pool.Query(ctx, s.q.listOpen, namespace, after.CreatedAt, after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list open: %w", err)
	}
	defer rows.Close()
	out := make([]idempay.Record, 0, min(limit, 64))
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
