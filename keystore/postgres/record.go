package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/idempay/idempay"
)

// columns is the order in which every statement returns a record.
var columns = []string{
	"namespace", "intent_id", "attempt", "key", "fingerprint", "state",
	"created_at", "updated_at", "closed_at", "creator", "lease_owner",
	"lease_until", "provider_ref", "result", "history",
}

// columnList is columns, each prefixed with alias and a dot unless alias is
// empty, comma-separated.
func columnList(alias string) string {
	if alias == "" {
		return strings.Join(columns, ", ")
	}
	return alias + "." + strings.Join(columns, ", "+alias+".")
}

// scanRecord reads the columns of one record, then extra.
func scanRecord(row pgx.Row, extra ...any) (idempay.Record, error) {
	var (
		r                    idempay.Record
		state                string
		closedAt, leaseUntil pgtype.Timestamptz
		history              []byte
	)
	dest := append([]any{
		&r.Namespace, &r.ID, &r.Attempt, &r.Key, &r.Fingerprint, &state,
		&r.CreatedAt, &r.UpdatedAt, &closedAt, &r.Creator, &r.LeaseOwner,
		&leaseUntil, &r.ProviderRef, &r.Result, &history,
	}, extra...)
	if err := row.Scan(dest...); err != nil {
		return idempay.Record{}, err
	}
	r.State = idempay.State(state)
	r.CreatedAt, r.UpdatedAt = utc(r.CreatedAt), utc(r.UpdatedAt)
	r.ClosedAt, r.LeaseUntil = validTime(closedAt), validTime(leaseUntil)
	if r.State.Closed() && r.ClosedAt.IsZero() {
		// Closed by a version-1 binary during a rolling deploy, before
		// the trigger of migration 2 existed: it closed at its last
		// update.
		r.ClosedAt = r.UpdatedAt
	}
	h, err := decodeHistory(history)
	if err != nil {
		return idempay.Record{}, fmt.Errorf("history of %q/%q: %w", r.Namespace, r.ID, err)
	}
	r.History = h
	return r, nil
}

// decodeHistory reads the history column, a JSON array of past attempts.
// An empty history is nil, as in a record that never had one.
func decodeHistory(b []byte) ([]idempay.PastAttempt, error) {
	var h []idempay.PastAttempt
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, nil
	}
	for i := range h {
		h[i].CreatedAt, h[i].ClosedAt = utc(h[i].CreatedAt), utc(h[i].ClosedAt)
	}
	return h, nil
}

// utc returns t in UTC. pgx returns timestamptz in the local zone, and
// JSON strings carry the writer's session zone; UTC makes records read on
// two machines with different zones compare and print the same.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// validTime maps NULL to the zero time.
func validTime(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// microseconds is d in whole microseconds, rounded up: the precision of
// timestamptz, in the direction that never shortens a lease or a retention.
func microseconds(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if d%time.Microsecond > 0 {
		us++
	}
	return us
}
