package admin

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/idempay/idempay"
)

// Local runs Ops on a Client in this process. Store must be the Client's
// store (Expire runs on it); Clock reads the time Expire measures the
// journal's age by (default time.Now).
type Local struct {
	Client *idempay.Client
	Store  idempay.KeyStore
	Clock  func() time.Time
}

var _ Ops = (*Local)(nil)

// Open lists the open charges, then refunds, captures and cancels.
func (l *Local) Open(ctx context.Context) ([]Item, error) {
	var out []Item
	add := func(kind string, recs func(yield func(idempay.Record, error) bool)) error {
		for r, err := range recs {
			if err != nil {
				return err
			}
			out = append(out, Item{Kind: kind, ID: r.ID, Attempt: r.Attempt, Key: r.Key, State: r.State,
				CreatedAt: r.CreatedAt, LeaseOwner: r.LeaseOwner, LeaseUntil: r.LeaseUntil})
		}
		return nil
	}
	if err := add("charge", l.Client.Unresolved(ctx)); err != nil {
		return nil, err
	}
	for _, t := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		if err := add(string(t), l.Client.UnresolvedOps(ctx, t)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Show returns the charge's record.
func (l *Local) Show(ctx context.Context, intentID string) (idempay.Record, error) {
	return l.Client.Record(ctx, intentID)
}

// Settle settles the charge by lookup.
func (l *Local) Settle(ctx context.Context, intentID string) (Settled, error) {
	if _, err := l.Client.Record(ctx, intentID); err != nil {
		return Settled{}, err
	}
	ch, err := l.Client.Settle(ctx, intentID)
	s := Settled{IntentID: intentID, Outcome: idempay.OutcomeOf(err)}
	if ch != nil {
		s.ChargeID = ch.ID
	}
	if err != nil {
		s.Error = err.Error()
	}
	if rec, lerr := l.Client.Record(ctx, intentID); lerr == nil {
		s.State = rec.State
	}
	return s, nil
}

// Reconcile runs one pass by lookup.
func (l *Local) Reconcile(ctx context.Context, progress func(idempay.ReconcileProgress)) (*idempay.ReconcileReport, error) {
	r := &idempay.Reconciler{Client: l.Client, Progress: progress}
	rep, err := r.Reconcile(ctx)
	if errors.Is(err, idempay.ErrReconcileIncomplete) {
		err = nil // the report says what is left
	}
	return rep, err
}

// Journal writes the journal as JSON lines.
func (l *Local) Journal(ctx context.Context, since time.Time, w io.Writer) (int, error) {
	return idempay.WriteJournalJSON(w, l.Client.Journal(ctx, since))
}

// Expire runs the store's Expire and closes the old journal records.
func (l *Local) Expire(ctx context.Context, retention time.Duration, dryRun bool) (Expired, error) {
	now := time.Now
	if l.Clock != nil {
		now = l.Clock
	}
	if retention <= 0 {
		return Expired{}, errors.New("admin: expire: retention must be positive")
	}
	if dryRun {
		n := 0
		cutoff := now().Add(-retention)
		for e, err := range l.Client.Journal(ctx, time.Time{}) {
			if err != nil {
				return Expired{}, err
			}
			if e.Try == 1 && e.SentAt.Before(cutoff) {
				n++ // one record per flight: its first request
			}
		}
		return Expired{DryRun: true, Records: -1, Journal: n}, nil
	}
	j, err := l.Client.ExpireJournal(ctx, retention, now())
	if err != nil {
		return Expired{Journal: j}, err
	}
	n, err := l.Store.Expire(ctx, retention)
	return Expired{Records: n, Journal: j}, err
}
