package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idempay/idempay"
)

// reserveAttempts bounds the insert-then-claim loop. A second pass is needed
// only when Expire deletes the row between the two statements, which needs a
// settled record older than the retention cutoff racing a new Reserve of the
// same intent; a third would mean the same race twice in a row.
const reserveAttempts = 3

// Reserve implements idempay.KeyStore. It costs one statement when it
// creates the record and two when the record exists. The insert or claim is
// committed (autocommit) before Reserve returns.
func (s *Store) Reserve(ctx context.Context, r idempay.Record) (idempay.Reservation, error) {
	if !r.State.Valid() {
		return idempay.Reservation{}, fmt.Errorf("postgres: reserve: invalid state %q", r.State)
	}
	for range reserveAttempts {
		rec, err := scanRecord(s.pool.QueryRow(ctx, s.q.insert,
			r.Namespace, r.IntentID, r.Key, r.Fingerprint, string(r.State), r.CreatedAt,
			r.UpdatedAt, r.LeaseOwner, nullTime(r.LeaseUntil), r.ProviderRef, r.Result))
		if err == nil {
			return idempay.Reservation{Record: rec, Created: true, Claimed: true}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return idempay.Reservation{}, fmt.Errorf("postgres: reserve: insert: %w", err)
		}

		var claimed bool
		rec, err = scanRecord(s.pool.QueryRow(ctx, s.q.claim,
			r.Namespace, r.IntentID, r.LeaseOwner, nullTime(r.LeaseUntil), r.UpdatedAt), &claimed)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // deleted by Expire in between: insert again
		}
		if err != nil {
			return idempay.Reservation{}, fmt.Errorf("postgres: reserve: claim: %w", err)
		}
		return idempay.Reservation{Record: rec, Claimed: claimed}, nil
	}
	return idempay.Reservation{}, fmt.Errorf("postgres: reserve: record of %q/%q vanished %d times during reserve",
		r.Namespace, r.IntentID, reserveAttempts)
}

// Resolve implements idempay.KeyStore with one conditional UPDATE, which
// also checks res.LeaseOwner when it is set; only when it matches nothing
// does a second statement find out why.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if !res.State.Valid() {
		return fmt.Errorf("postgres: resolve: invalid state %q", res.State)
	}
	tag, err := s.pool.Exec(ctx, s.q.resolve,
		res.Namespace, res.IntentID, res.Key, string(res.State), res.At,
		res.ProviderRef, res.Result != nil, res.Result, res.LeaseOwner)
	if err != nil {
		return fmt.Errorf("postgres: resolve: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}

	var (
		key   string
		state string
		owner string
	)
	err = s.pool.QueryRow(ctx, s.q.lookup, res.Namespace, res.IntentID).Scan(&key, &state, &owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return idempay.ErrNotFound
	case err != nil:
		return fmt.Errorf("postgres: resolve: %w", err)
	case key != res.Key:
		return idempay.ErrKeyMismatch
	case idempay.State(state).Closed():
		return idempay.ErrAlreadyResolved
	case res.LeaseOwner != "" && owner != res.LeaseOwner:
		return idempay.ErrLeaseLost
	default:
		// The row matches now but did not when the update ran: a
		// concurrent Reserve inserted it in between. At the instant of the
		// update there was no record, and keys are never reused, so that
		// is the answer. (A row with another owner's lease at the update
		// that is ours by now would need a claim by this very owner in
		// between; it is answered the same way.)
		return idempay.ErrNotFound
	}
}
