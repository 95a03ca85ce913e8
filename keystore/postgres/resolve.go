package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idempay/idempay"
)

// Resolve implements idempay.KeyStore in one statement, whether it applies
// or not: the statement locks the row, writes it only if the key, the state
// and (when res.LeaseOwner is set) the lease owner allow, and returns what
// it checked, from which Resolve tells the caller why nothing changed.
// UpdatedAt and, on closing, ClosedAt are the server's clock.
//
// With res.Durable, or always under WithDurableResolve, the commit waits for
// the WAL flush (synchronous_commit on, or the session's stronger setting);
// otherwise it does not (synchronous_commit off, for this statement only).
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if !res.State.Valid() {
		return fmt.Errorf("postgres: resolve %q/%q: invalid state %q", res.Namespace, res.ID, res.State)
	}
	var (
		key, state, owner string
		applied           bool
	)
	err := s.pool.QueryRow(ctx, s.q.resolve, s.resolveArgs(res)...).Scan(&key, &state, &owner, &applied)
	if errors.Is(err, pgx.ErrNoRows) {
		err = idempay.ErrNotFound
	}
	if err == nil && !applied {
		err = refusal(res, key, idempay.State(state), owner)
	}
	if err != nil {
		return fmt.Errorf("postgres: resolve %q/%q: %w", res.Namespace, res.ID, err)
	}
	return nil
}

// resolveArgs are the parameters of resolveSQL for res.
func (s *Store) resolveArgs(res idempay.Resolution) []any {
	durable := res.Durable || s.cfg.durableResolve
	return []any{res.Namespace, res.ID, res.Key, string(res.State),
		res.ProviderRef, res.Result != nil, res.Result, durable, res.LeaseOwner}
}

// refusal is why a Resolve of the stored key, state and lease owner changed
// nothing, checked in the contract's order.
func refusal(res idempay.Resolution, key string, state idempay.State, owner string) error {
	switch {
	case key != res.Key:
		return idempay.ErrKeyMismatch
	case state.Closed():
		return fmt.Errorf("record is %s: %w", state, idempay.ErrAlreadyResolved)
	case res.LeaseOwner != "" && owner != res.LeaseOwner:
		return idempay.ErrLeaseLost
	}
	// The statement checked the row it had locked and returned it, so
	// the two agree; this is a broken statement, not a race.
	return errors.New("postgres: resolve matched the record but did not apply")
}
