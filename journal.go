package idempay

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"
)

// JournalEntry is one attempt of one operation on the wire: a request the
// client handed to the network (Sent), or one it held back before the
// first byte (the lease lost, the retry budget empty). It carries no
// secret: keys and fingerprints are not secrets (a fingerprint is a hash),
// and neither the request body nor any credential is kept.
type JournalEntry struct {
	Namespace   string    `json:"namespace"`            // the record's namespace
	Operation   string    `json:"operation"`            // "charge", "refund", "capture" or "cancel"
	ID          string    `json:"id"`                   // the intent, or the operation's ID
	Attempt     int       `json:"attempt"`              // the record's attempt (its key)
	Try         int       `json:"try"`                  // the request's place in its flight, from 1
	Key         string    `json:"key"`                  // the idempotency key sent
	Fingerprint string    `json:"fingerprint"`          // hash of the attempt's parameters
	Instance    string    `json:"instance"`             // the flight's lease owner
	SentAt      time.Time `json:"sent_at"`              // when it was handed to the network (this process's clock)
	Sent        bool      `json:"sent"`                 // false: held back before the first byte
	Status      int       `json:"status"`               // the HTTP status, 0 when no answer came back
	RequestID   string    `json:"request_id,omitempty"` // the provider's request ID
	ObjectID    string    `json:"object_id,omitempty"`  // the provider's charge or operation ID
	Outcome     string    `json:"outcome"`              // what the answer meant: succeeded, declined, lost, ...
	Replayed    bool      `json:"replayed"`             // the provider marked the answer as a replay
}

// journalNamespace is where a namespace's journal lives in the store.
func journalNamespace(ns string) string { return ns + "/journal" }

const (
	journalKey         = "journal"
	journalFingerprint = "idempay-journal-v1"
)

// wireNotes is what the transport saw of each request of one flight, in
// order: when it left, whether it did, and the status that came back.
type wireNotes struct {
	mu    sync.Mutex
	notes []wireNote
}

type wireNote struct {
	at     time.Time
	sent   bool
	status int
}

func (w *wireNotes) add(sent bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notes = append(w.notes, wireNote{at: time.Now(), sent: sent})
	return len(w.notes) - 1
}

func (w *wireNotes) answer(i, status int) {
	w.mu.Lock()
	w.notes[i].status = status
	w.mu.Unlock()
}

func (w *wireNotes) list() []wireNote {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]wireNote(nil), w.notes...)
}

// entries are the flight's journal entries: a note per request, with what
// the flight read of its answer.
func (f *flight) entries() []JournalEntry {
	notes := f.probe.notes.list()
	out := make([]JournalEntry, 0, len(notes))
	op, id := journalOp(f.rec.Namespace, f.c.namespace), f.rec.ID
	for i, n := range notes {
		e := JournalEntry{Namespace: f.rec.Namespace, Operation: op, ID: id, Attempt: f.rec.Attempt, Try: i + 1,
			Key: f.rec.Key, Fingerprint: f.rec.Fingerprint, Instance: f.claim.Owner(), SentAt: n.at, Sent: n.sent,
			Status: n.status, Outcome: KindUnknown.String()}
		if i < len(f.attempts) {
			a := f.attempts[i]
			e.Outcome, e.Replayed, e.RequestID = a.Kind.String(), a.Replayed, a.RequestID
			if a.Charge != nil {
				e.ObjectID = a.Charge.ID
			}
			if a.Err != nil && e.RequestID == "" {
				e.RequestID = a.Err.RequestID
			}
		}
		out = append(out, e)
	}
	return out
}

// journalOp names the operation a record's namespace holds.
func journalOp(recNS, clientNS string) string {
	if rest, ok := strings.CutPrefix(recNS, clientNS+"/"); ok {
		return rest
	}
	return "charge"
}

// writeJournal stores the flight's entries, durably, as one record of the
// journal namespace, before the flight's outcome is recorded: whenever the
// outcome is in the store, so is the journal of the requests behind it. A
// journal that cannot be written is logged and does not change the outcome.
func (c *Client) writeJournal(ctx context.Context, f *flight) {
	if !c.journal || f.claim == nil {
		return
	}
	entries := f.entries()
	if len(entries) == 0 {
		return
	}
	raw, err := json.Marshal(entries)
	if err == nil {
		err = c.storeJournal(context.WithoutCancel(ctx), f, raw)
	}
	if err != nil {
		c.log.WarnContext(ctx, "idempay: journal not written", "intent", f.rec.ID, "error", err.Error())
	}
}

func (c *Client) storeJournal(ctx context.Context, f *flight, raw []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.claims.withDefaults().WriteTimeout)
	defer cancel()
	ns := journalNamespace(c.namespace)
	// One record per flight: its owner is unique to the flight.
	id := journalOp(f.rec.Namespace, c.namespace) + "/" + f.rec.ID + "/" + strconv.Itoa(f.rec.Attempt) + "/" + f.claim.Owner()
	owner := c.claims.NewOwner()
	res, err := c.store.Reserve(ctx, ReserveRequest{Namespace: ns, ID: id, Attempt: 1, Key: journalKey,
		Fingerprint: journalFingerprint, Owner: owner, Lease: c.claims.Lease})
	if err != nil {
		return err
	}
	if !res.Claimed {
		return fmt.Errorf("%w: journal record %s", ErrInProgress, id)
	}
	// Left open, so that ListOpen pages through the journal in the order
	// it was written; Client.ExpireJournal closes what is past retention.
	return c.store.Resolve(ctx, Resolution{Namespace: ns, ID: id, Key: journalKey, State: StateOpen,
		Result: raw, LeaseOwner: owner, Durable: true})
}

// Journal yields the journal entries of every flight of this client's
// namespace (charges and operations) whose record was written at or after
// since, on the store's clock, in the order they were written. An error
// ends the sequence. It reads the store only.
func (c *Client) Journal(ctx context.Context, since time.Time) iter.Seq2[JournalEntry, error] {
	return func(yield func(JournalEntry, error) bool) {
		const page = 100
		after := Cursor{CreatedAt: since.Add(-time.Nanosecond)}
		for {
			recs, err := c.store.ListOpen(ctx, journalNamespace(c.namespace), after, page)
			if err != nil {
				yield(JournalEntry{}, err)
				return
			}
			for _, r := range recs {
				var es []JournalEntry
				if err := json.Unmarshal(r.Result, &es); err != nil {
					if !yield(JournalEntry{}, fmt.Errorf("%w: journal record %s unreadable: %w", ErrStore, r.ID, err)) {
						return
					}
					continue
				}
				for _, e := range es {
					if !yield(e, nil) {
						return
					}
				}
			}
			if len(recs) < page {
				return
			}
			after = CursorOf(recs[len(recs)-1])
		}
	}
}

// ExpireJournal closes the journal records written more than retention
// before now (which the caller reads as near the store's clock as it can:
// records are stamped by the store), so that KeyStore.Expire deletes them
// with the other closed records, one retention later; it returns how many
// it closed. Give it the retention the service's Expire uses: the journal
// of an attempt then outlives the attempt's record.
func (c *Client) ExpireJournal(ctx context.Context, retention time.Duration, now time.Time) (int, error) {
	cutoff := now.Add(-retention)
	n := 0
	ns := journalNamespace(c.namespace)
	for {
		recs, err := c.store.ListOpen(ctx, ns, Cursor{}, 100)
		if err != nil {
			return n, err
		}
		closed := 0
		for _, r := range recs {
			if !r.CreatedAt.Before(cutoff) {
				return n, nil
			}
			if err := c.store.Resolve(ctx, Resolution{Namespace: ns, ID: r.ID, Key: journalKey,
				State: StateSucceeded}); err != nil {
				return n, err
			}
			n++
			closed++
		}
		if len(recs) < 100 || closed == 0 {
			return n, nil
		}
	}
}

// WriteJournalJSON writes entries as JSON lines, one entry a line.
func WriteJournalJSON(w io.Writer, entries iter.Seq2[JournalEntry, error]) (int, error) {
	enc := json.NewEncoder(w)
	n := 0
	for e, err := range entries {
		if err != nil {
			return n, err
		}
		if err := enc.Encode(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// journalCSVHeader names the CSV columns, in JournalEntry's order.
var journalCSVHeader = []string{"namespace", "operation", "id", "attempt", "try", "key", "fingerprint", "instance",
	"sent_at", "sent", "status", "request_id", "object_id", "outcome", "replayed"}

// WriteJournalCSV writes entries as CSV with a header line; times are
// RFC 3339 with nanoseconds, in UTC.
func WriteJournalCSV(w io.Writer, entries iter.Seq2[JournalEntry, error]) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(journalCSVHeader); err != nil {
		return 0, err
	}
	n := 0
	for e, err := range entries {
		if err != nil {
			cw.Flush()
			return n, err
		}
		row := []string{e.Namespace, e.Operation, e.ID, strconv.Itoa(e.Attempt), strconv.Itoa(e.Try), e.Key,
			e.Fingerprint, e.Instance, e.SentAt.UTC().Format(time.RFC3339Nano), strconv.FormatBool(e.Sent),
			strconv.Itoa(e.Status), e.RequestID, e.ObjectID, e.Outcome, strconv.FormatBool(e.Replayed)}
		if err := cw.Write(row); err != nil {
			return n, err
		}
		n++
	}
	cw.Flush()
	return n, cw.Error()
}
