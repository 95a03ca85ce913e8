// Package admin exposes a running service's idempay records to operators:
// what is open, one record, settling one, a reconcile pass, the attempt
// journal and expiry. Ops is the one set of operations; Local runs them on
// a Client in this process, Handler serves them over HTTP (mount it in the
// service, behind its own authentication, and give it a token), and Remote
// calls such a handler. The idempay command (cmd/idempay) uses Local for
// PostgreSQL and Redis stores, and Remote for a file store, whose lock
// admits one process only: the service's.
package admin

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/idempay/idempay"
)

// Ops is what an operator can do with a client's records.
type Ops interface {
	// Open lists every open and pending record: charges and operations.
	Open(ctx context.Context) ([]Item, error)
	// Show returns one charge's record.
	Show(ctx context.Context, intentID string) (idempay.Record, error)
	// Settle settles one charge by lookup (Client.Settle).
	Settle(ctx context.Context, intentID string) (Settled, error)
	// Reconcile runs one reconcile pass by lookup; progress, if set, is
	// told how far it has come (Remote reports it once, at the end).
	Reconcile(ctx context.Context, progress func(idempay.ReconcileProgress)) (*idempay.ReconcileReport, error)
	// Journal writes the journal entries written since since, as JSON
	// lines, to w, and returns how many.
	Journal(ctx context.Context, since time.Time, w io.Writer) (int, error)
	// Expire deletes the records closed more than retention ago and closes
	// the journal's older records; with dryRun it changes nothing and
	// counts what the journal would close (the stores cannot count their
	// closed records without deleting them).
	Expire(ctx context.Context, retention time.Duration, dryRun bool) (Expired, error)
}

// Item is one open or pending record.
type Item struct {
	Kind       string        `json:"kind"` // "charge", "refund", "capture", "cancel"
	ID         string        `json:"id"`
	Attempt    int           `json:"attempt"`
	Key        string        `json:"key"`
	State      idempay.State `json:"state"`
	CreatedAt  time.Time     `json:"created_at"`
	LeaseOwner string        `json:"lease_owner,omitempty"`
	LeaseUntil time.Time     `json:"lease_until,omitzero"`
}

// Settled is the answer of Settle.
type Settled struct {
	IntentID string          `json:"intent_id"`
	Outcome  idempay.Outcome `json:"outcome"`
	State    idempay.State   `json:"state"`
	ChargeID string          `json:"charge_id,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Expired is the answer of Expire.
type Expired struct {
	DryRun bool `json:"dry_run"`
	// Records is how many settled records the store deleted (-1 in a dry
	// run: not countable).
	Records int `json:"records"`
	// Journal is how many journal records were closed (or would be).
	Journal int `json:"journal"`
}

// ErrUnauthorized is returned by Remote when the handler refused its
// token.
var ErrUnauthorized = errors.New("admin: token refused")
