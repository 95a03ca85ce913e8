package idempay

import (
	"context"
	"errors"
	"fmt"
)

// What a record's close writes into the intent's ledger first, so that
// the ledger answers alone once the store's retention has deleted the
// record: a charge's facts when it succeeds, an operation's outcome when
// it settles. A fact (a success, a decline) is written before its record
// is closed, and a failed write leaves the record open, so a closed record
// always has its outcome in the ledger. A failure that rests on "nothing
// this flight sent arrived" is only true while the flight holds its lease,
// which the store checks as it closes: it is written after the close, and
// if that write is lost the entry stays open, counting against what is
// left: never under-count.

// enterCharge writes the facts of ch, the intent's charge that succeeded
// in rec's current attempt, into its ledger, unless the ledger holds them
// already.
func (c *Client) enterCharge(ctx context.Context, rec Record, ch *Charge) error {
	intentID := rec.ID
	if ch == nil {
		return nil
	}
	// No read first: the claim below reads the ledger as it takes it, and
	// one that holds the facts already is given back unwritten
	// (updateLedger). A read here would find nothing for nearly every
	// charge (its first success creates the ledger) and cost a round trip.
	facts := chargeFacts(ch, rec)
	// On a store that keeps its writes in order the facts need no sync of
	// their own: the record's close comes after them, so a crash cannot
	// keep the close without them (see WriteOrderKeeper).
	return c.withLedgerOf(ctx, intentID, c.ordered(), func() (ledgerCharge, error) { return facts, nil },
		func(*ledgerDoc) error { return nil })
}

// noteOp writes st, the outcome of the current attempt of rec (the record
// of operation t of intentID), into that attempt's ledger entry; ref is
// the provider's ID of what it made. An attempt the ledger never entered
// (refused before its first byte, or answered from the ledger) has nothing
// to write.
func (c *Client) noteOp(ctx context.Context, t OpType, intentID string, rec Record, st State, ref string) error {
	if !st.Closed() {
		return nil // an open or pending record is never deleted: reconcile reads it
	}
	lrec, err := c.store.Load(ctx, c.ledgerNamespace(), intentID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil // no ledger, no entry
	case err != nil:
		return fmt.Errorf("%w: ledger: %w", ErrStore, err)
	}
	doc, err := decodeLedger(lrec.Result)
	if err != nil {
		return err
	}
	if e, ok := doc.entry(t, rec.ID, currentAttempt(rec)); !ok || e.State.Closed() {
		return nil
	}
	return c.withLedger(ctx, intentID, func(d *ledgerDoc) error {
		if e, ok := d.entry(t, rec.ID, currentAttempt(rec)); ok {
			e.State, e.Ref = st, ref
		}
		return nil
	})
}
