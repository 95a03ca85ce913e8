package postgres

import (
	"context"
	"fmt"
	"time"
)

// Expire implements idempay.KeyStore. It deletes the settled records closed
// more than retention ago by the server's clock (ClosedAt, never CreatedAt)
// in batches (WithExpireBatch, default 1000 rows per DELETE, each its own
// transaction) until a batch comes back short, so no statement holds many
// row locks or runs long however large the backlog. Open and pending rows
// are never selected. If ctx ends between batches Expire returns what it
// deleted so far with ctx's error.
func (s *Store) Expire(ctx context.Context, retention time.Duration) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		tag, err := s.pool.Exec(ctx, s.q.expire, microseconds(retention), s.cfg.expireBatch)
		if err != nil {
			return total, fmt.Errorf("postgres: expire: %w", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < s.cfg.expireBatch {
			return total, nil
		}
	}
}
