package idempay

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockStepSlack is how far below what the store's clock has been seen to
// read a reading may fall before it counts as a step back: the readings
// of concurrent calls arrive out of order by far less.
const clockStepSlack = time.Second

// aheadSlack is how far the store's clock may read ahead of a Client's own
// before the Client writes it down for the fleet (clockFacts): ordinary
// skew between hosts, which the providers' lookup windows absorb
// (omise.Provider.ClockSkew), stays below it; a lead that grows by less
// than it is not written again.
const aheadSlack = time.Minute

// storeFloor is what one Client has seen of its store's clock: the latest
// reading, carried forward by the holder's own elapsed time (Config.Clock,
// which does not jump back). It is a lower bound of the store's clock now,
// as long as that clock does not step back; a reading below it shows the
// step (NTP, a VM migration, a failover to another host), after which the
// ages of existing records, read on the stepped clock, may be too young.
// It never makes an age older: a store clock that jumped ahead and came
// back only makes existing records' ages unknown until it catches up.
//
// What it sees beyond the process (a step back, the store reading ahead
// of this host) it keeps for the fleet's clockFacts, which outlive it.
type storeFloor struct {
	mu   sync.Mutex
	set  bool
	base time.Time // the holder's clock at the first reading
	at   time.Time // the floor, on the store's clock, as of base

	seen  clockFacts // what this Client saw
	saved clockFacts // what it knows the store holds

	// lead is the most the store's clock has read ahead of the holder's
	// (negative when always behind), once read; against prov, what the
	// answers tell of the provider's clock, it bounds how far the store
	// reads ahead of the provider (ahead).
	lead    time.Duration
	leadSet bool
	prov    *providerClock
}

// observe takes the store's reading storeNow, made no earlier than the
// holder's instant local, and reports whether it is below what the store's
// clock has read before (a step back).
func (f *storeFloor) observe(storeNow, local time.Time) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen.Ahead = max(f.seen.Ahead, storeNow.Sub(local))
	if d := storeNow.Sub(local); !f.leadSet || d > f.lead {
		f.lead, f.leadSet = d, true
	}
	if !f.set {
		f.set, f.base, f.at = true, local, storeNow
		return false
	}
	elapsed := local.Sub(f.base)
	floor := f.at.Add(elapsed)
	if storeNow.After(floor) {
		f.at = storeNow.Add(-elapsed)
	}
	stepped := storeNow.Before(floor.Add(-clockStepSlack))
	if stepped && floor.After(f.seen.SteppedFrom) {
		f.seen.SteppedFrom = floor
	}
	return stepped
}

// seenLocked is what this Client saw, the store's lead over the provider's
// clock included: the store read lead ahead of the holder, the provider at
// least prov's offset, so the store read at most their difference ahead of
// the provider. It is the larger of that and the lead over the holder: a
// host whose clock is ahead too hides the store's lead, the provider's
// clock does not (seed 520117: hosts 46 min and 2 h 22 min fast, the
// store 40 min, an Omise lookup's window started after the charge).
func (f *storeFloor) seenLocked() clockFacts {
	out := f.seen
	if off, ok := f.prov.offset(); ok && f.leadSet {
		out.Ahead = max(out.Ahead, f.lead-off)
	}
	return out
}

// unsaved is what this Client saw that the store does not hold yet.
func (f *storeFloor) unsaved() (clockFacts, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out clockFacts
	seen := f.seenLocked()
	if seen.SteppedFrom.After(f.saved.SteppedFrom) {
		out.SteppedFrom = seen.SteppedFrom
	}
	if seen.Ahead > f.saved.Ahead+aheadSlack {
		out.Ahead = seen.Ahead.Truncate(time.Second) + time.Second
	}
	return out, !out.SteppedFrom.IsZero() || out.Ahead > 0
}

// merge adds facts the store holds to what this Client knows of them, and
// returns everything it knows, seen or stored.
func (f *storeFloor) merge(stored clockFacts) clockFacts {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved = f.saved.union(stored)
	return f.saved.union(f.seenLocked())
}

// clockFacts is what the fleet has seen of the store's clock, kept in the
// store (clockNamespace) so that it outlives every process: a Client that
// starts after a step back knows of it, though its own floor never saw
// the clock before.
//
//   - SteppedFrom: the store's clock stepped back from this reading. A
//     record whose CreatedAt is at or before it may have been stamped
//     before the step, so its age read now is too young by an unknown
//     amount: its key is never resent (it is settled by lookup).
//   - Ahead: the most the store's clock has read ahead of a Client's. A
//     reservation may carry a CreatedAt that much later than true time,
//     and a provider's lookup that lists charges from CreatedAt (Omise)
//     would start after the charge and find nothing: every lookup's
//     CreatedAt is moved back by it, even once the clock is set right.
type clockFacts struct {
	SteppedFrom time.Time
	Ahead       time.Duration
}

func (a clockFacts) union(b clockFacts) clockFacts {
	if b.SteppedFrom.After(a.SteppedFrom) {
		a.SteppedFrom = b.SteppedFrom
	}
	a.Ahead = max(a.Ahead, b.Ahead)
	return a
}

// clockNamespace is where a namespace's clock facts live: one record per
// fact, inserted and never closed (so never expired), its value in its ID.
// Inserts are durable in every store and need no lease, so two Clients
// writing at once never wait for each other.
func clockNamespace(ns string) string { return ns + "/clock" }

const (
	clockFingerprint = "idempay-clock-v1"
	steppedPrefix    = "stepped-from:"
	aheadPrefix      = "ahead:"
)

// saveStoreClock writes what this Client saw of the store's clock that
// the store does not hold yet, durably, before anything is sent on a
// reservation: lost, a later Client would take a stepped clock's ages,
// or a fast clock's CreatedAt, as true.
func (c *Client) saveStoreClock(ctx context.Context) error {
	f := c.claims.floor
	if _, ok := f.unsaved(); !ok {
		return nil
	}
	if _, err := c.storeClockFacts(ctx); err != nil { // another member may have written them
		return err
	}
	facts, ok := f.unsaved()
	if !ok {
		return nil
	}
	var ids []string
	if !facts.SteppedFrom.IsZero() {
		ids = append(ids, steppedPrefix+facts.SteppedFrom.UTC().Format(time.RFC3339Nano))
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: the store's clock stepped back; ages of records stamped before it are unknown",
			slog.Time("from", facts.SteppedFrom))
	}
	if facts.Ahead > 0 {
		ids = append(ids, aheadPrefix+strconv.FormatInt(int64(facts.Ahead), 10))
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: the store's clock reads ahead of this host's; lookups widen their windows",
			slog.Duration("ahead", facts.Ahead))
	}
	for _, id := range ids {
		_, err := c.store.Reserve(ctx, ReserveRequest{Namespace: clockNamespace(c.namespace), ID: id, Attempt: 1,
			Key: id, Fingerprint: clockFingerprint, Owner: c.claims.NewOwner(), Lease: c.claims.Lease})
		if err != nil {
			return fmt.Errorf("%w: store clock facts: %w", ErrStore, err)
		}
	}
	f.merge(facts)
	return nil
}

// keepStoreClock is saveStoreClock after a flight, for what its renewals
// saw: nothing waits on it, so a failure is only logged (the next
// reservation tries again before it sends).
func (c *Client) keepStoreClock(ctx context.Context, rec Record) {
	if err := c.saveStoreClock(ctx); err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: could not keep what was seen of the store's clock",
			slog.String("intent", rec.ID), slog.String("error", err.Error()))
	}
}

// storeClockFacts reads the fleet's clock facts, with this Client's own.
func (c *Client) storeClockFacts(ctx context.Context) (clockFacts, error) {
	var stored clockFacts
	for after := (Cursor{}); ; {
		recs, err := c.store.ListOpen(ctx, clockNamespace(c.namespace), after, 100)
		if err != nil {
			return c.claims.floor.merge(clockFacts{}), fmt.Errorf("%w: store clock facts: %w", ErrStore, err)
		}
		for _, r := range recs {
			stored = stored.union(parseClockFact(r.ID))
		}
		if len(recs) < 100 {
			return c.claims.floor.merge(stored), nil
		}
		after = CursorOf(recs[len(recs)-1])
	}
}

// parseClockFact reads one fact from its record's ID; one it cannot read
// is no fact.
func parseClockFact(id string) clockFacts {
	if s, ok := strings.CutPrefix(id, steppedPrefix); ok {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err == nil {
			return clockFacts{SteppedFrom: t}
		}
	}
	if s, ok := strings.CutPrefix(id, aheadPrefix); ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil && n > 0 {
			return clockFacts{Ahead: time.Duration(n)}
		}
	}
	return clockFacts{}
}

// ageTrusted reports whether the age the store's clock gives rec's current
// attempt can be believed: no member of the fleet saw the store's clock
// step back from a reading at or after rec's CreatedAt. A store that
// cannot say is not believed.
func (c *Client) ageTrusted(ctx context.Context, rec Record) bool {
	facts, err := c.storeClockFacts(ctx)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "idempay: store clock facts unreadable; the key's age is not trusted",
			slog.String("intent", rec.ID), slog.String("error", err.Error()))
		return false
	}
	return facts.SteppedFrom.IsZero() || rec.CreatedAt.After(facts.SteppedFrom)
}

// lookupRecord is rec as a provider's lookup should read it: its CreatedAt
// moved back by the most the store's clock was seen to read ahead, so a
// window that starts from it starts before the charge.
func (c *Client) lookupRecord(ctx context.Context, rec Record) (Record, error) {
	if rec.CreatedAt.IsZero() {
		return rec, nil
	}
	facts, err := c.storeClockFacts(ctx)
	if err != nil {
		return rec, err
	}
	rec.CreatedAt = rec.CreatedAt.Add(-max(facts.Ahead, 0))
	return rec, nil
}
