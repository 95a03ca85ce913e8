package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idempay/idempay"
)

// reserveAttempts bounds the insert-then-claim loop. A second pass is needed
// only when Expire deletes the row between the two statements, which needs a
// settled record older than the retention racing a new Reserve of the same
// intent; a third would mean the same race twice in a row.
const reserveAttempts = 3

// Reserve implements idempay.KeyStore. It costs one statement when it
// creates the record and two when the record exists: the insert, then one
// statement that begins a new attempt, claims the lease or reads the record.
// Every instant is the server's; Reservation.Now is the server's clock at
// the step that decided. The insert or claim is committed with a
// synchronous commit (whatever the session's synchronous_commit) before
// Reserve returns.
func (s *Store) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if err := idempay.CheckReserveRequest(r); err != nil {
		return idempay.Reservation{}, fmt.Errorf("postgres: %w", err)
	}
	args := []any{r.Namespace, r.ID, r.Attempt, r.Key, r.Fingerprint, r.Owner, microseconds(r.Lease)}
	for range reserveAttempts {
		res, err := s.reserveStep(ctx, s.q.insert, args)
		if err == nil {
			return s.answer(r, res), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return idempay.Reservation{}, fmt.Errorf("postgres: reserve: insert: %w", err)
		}
		res, err = s.reserveStep(ctx, s.q.claim, args)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // deleted by Expire in between: insert again
		}
		if err != nil {
			return idempay.Reservation{}, fmt.Errorf("postgres: reserve: claim: %w", err)
		}
		return s.answer(r, res), nil
	}
	return idempay.Reservation{}, fmt.Errorf("postgres: reserve: record of %q/%q vanished %d times during reserve",
		r.Namespace, r.ID, reserveAttempts)
}

// reserveStep runs one of Reserve's statements, which return the record,
// the server's now and whether the caller holds the lease, or no row.
func (s *Store) reserveStep(ctx context.Context, sql string, args []any) (idempay.Reservation, error) {
	var (
		res idempay.Reservation
		now time.Time
	)
	rec, err := scanRecord(s.pool.QueryRow(ctx, sql, args...), &now, &res.Claimed)
	if err != nil {
		return idempay.Reservation{}, err
	}
	res.Record, res.Now = rec, now.UTC()
	return res, nil
}

// answer completes res for request r: Created is the contract's rule, the
// one the Go stores share, applied to the record as the statement left it.
func (s *Store) answer(r idempay.ReserveRequest, res idempay.Reservation) idempay.Reservation {
	res.Created = res.Claimed && res.Record.CreatedFor(r)
	return res
}
