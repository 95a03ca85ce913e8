// Package memstore is an idempay.KeyStore held in memory: a map behind a
// mutex, for tests and for a single process that can afford to forget its
// keys when it stops.
//
// It is not durable. After a restart every open intent is forgotten, and a
// charge resumed after the restart gets a new key, which is exactly the
// double charge idempay exists to prevent. Use keystore/filestore (one
// process) or a shared database store (a fleet) in production.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay"
)

// Store is an in-memory KeyStore. The zero value is an empty store on the
// wall clock, ready for use. A Store must not be copied after first use.
type Store struct {
	mu sync.RWMutex
	// byNS maps namespace, then intent ID, to the record. Grouping by
	// namespace keeps ListOpen from walking other namespaces' records.
	byNS map[string]map[string]idempay.Record
	now  func() time.Time
}

var _ idempay.KeyStore = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store stamp records with now instead of time.Now: the
// store's clock, which every client sharing it reads ages and leases on.
// Tests and the fault simulator move it by hand.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{}
	for _, o := range opts {
		o(s)
	}
	return s
}

// clock reads the store's clock, at the microsecond precision every store
// keeps.
func (s *Store) clock() time.Time {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	return now().UTC().Truncate(time.Microsecond)
}

// Reserve implements idempay.KeyStore: it inserts, begins a new attempt,
// claims or reads the record, as the contract says, under the store's lock.
func (s *Store) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if err := idempay.CheckReserveRequest(r); err != nil {
		return idempay.Reservation{}, fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	cur, ok := s.byNS[r.Namespace][r.ID]
	switch {
	case !ok:
		cur = idempay.Record{Namespace: r.Namespace, ID: r.ID}
		cur = begin(cur, r, now)
	case cur.BeginsAttempt(r.Attempt):
		cur.History = append(slices.Clone(cur.History), cur.Past())
		cur = begin(cur, r, now)
	case cur.ClaimableBy(r.Owner, r.Fingerprint, now):
		cur.LeaseOwner, cur.LeaseUntil, cur.UpdatedAt = r.Owner, now.Add(r.Lease), now
	default:
		return idempay.Reservation{Record: clone(cur), Now: now}, nil
	}
	s.put(cur)
	return idempay.Reservation{Record: clone(cur), Created: cur.CreatedFor(r), Claimed: true, Now: now}, nil
}

// begin makes r the current attempt of rec, open and leased to r.Owner.
func begin(rec idempay.Record, r idempay.ReserveRequest, now time.Time) idempay.Record {
	rec.Attempt, rec.Key, rec.Fingerprint, rec.State = r.Attempt, r.Key, r.Fingerprint, idempay.StateOpen
	rec.CreatedAt, rec.UpdatedAt, rec.ClosedAt = now, now, time.Time{}
	rec.Creator, rec.LeaseOwner, rec.LeaseUntil = r.Owner, r.Owner, now.Add(r.Lease)
	rec.ProviderRef, rec.Result = "", nil
	return rec
}

func (s *Store) put(r idempay.Record) {
	if s.byNS == nil {
		s.byNS = make(map[string]map[string]idempay.Record)
	}
	ns := s.byNS[r.Namespace]
	if ns == nil {
		ns = make(map[string]idempay.Record)
		s.byNS[r.Namespace] = ns
	}
	ns[r.ID] = r
}

// Resolve applies res to the stored record and releases its lease. It
// returns an error matching idempay.ErrNotFound, idempay.ErrKeyMismatch,
// idempay.ErrAlreadyResolved or (when res.LeaseOwner is set and does not
// hold the lease) idempay.ErrLeaseLost as the KeyStore contract says, and
// changes nothing in those cases. With res.State StateOpen the state is
// kept (an open record stays open, a pending one pending). Durable asks
// nothing more of a store that keeps nothing.
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("memstore: resolve %q/%q: invalid state %q", res.Namespace, res.ID, res.State)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.byNS[res.Namespace][res.ID]
	switch {
	case !ok:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.ID, idempay.ErrNotFound)
	case cur.Key != res.Key:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.ID, idempay.ErrKeyMismatch)
	case cur.State.Closed():
		return fmt.Errorf("memstore: resolve %q/%q (%s): %w", res.Namespace, res.ID, cur.State, idempay.ErrAlreadyResolved)
	case res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.ID, idempay.ErrLeaseLost)
	}
	now := s.clock()
	if res.State != idempay.StateOpen {
		cur.State = res.State
	}
	if cur.State.Closed() {
		cur.ClosedAt = now
	}
	if res.ProviderRef != "" {
		cur.ProviderRef = res.ProviderRef
	}
	if res.Result != nil {
		cur.Result = bytes.Clone(res.Result)
	}
	cur.UpdatedAt = now
	cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
	s.byNS[res.Namespace][res.ID] = cur
	return nil
}

// Load returns a copy of the record of the intent, or an error matching
// idempay.ErrNotFound.
func (s *Store) Load(ctx context.Context, namespace, intentID string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	cur, ok := s.byNS[namespace][intentID]
	if !ok {
		return idempay.Record{}, &notFoundError{op: "load", namespace: namespace, intentID: intentID}
	}
	return clone(cur), nil
}

// ListOpen returns copies of up to limit open and pending records of the
// namespace after the cursor, in (CreatedAt, IntentID) order. It walks and
// sorts the whole namespace, which is fine for the sizes this store is
// meant for.
func (s *Store) ListOpen(ctx context.Context, namespace string, after idempay.Cursor, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("memstore: list open: limit %d is not positive", limit)
	}
	s.mu.RLock()
	var out []idempay.Record
	for _, r := range s.byNS[namespace] {
		if !r.State.Closed() && after.After(r) {
			out = append(out, clone(r))
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b idempay.Record) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	if limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

// Expire deletes the succeeded and failed records, in every namespace,
// closed more than retention ago, and returns how many it deleted. Open
// and pending records are never deleted.
func (s *Store) Expire(ctx context.Context, retention time.Duration) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.clock().Add(-retention)
	n := 0
	for name, ns := range s.byNS {
		for id, r := range ns {
			if r.State.Closed() && r.ClosedAt.Before(cutoff) {
				delete(ns, id)
				n++
			}
		}
		if len(ns) == 0 {
			delete(s.byNS, name)
		}
	}
	return n, nil
}

// clone returns r with its own copies of Result and History, so that
// neither the caller nor the store can change the other's bytes. nil stays
// nil.
func clone(r idempay.Record) idempay.Record {
	r.Result = bytes.Clone(r.Result)
	if r.History != nil {
		h := make([]idempay.PastAttempt, len(r.History))
		for i, p := range r.History {
			p.Result = bytes.Clone(p.Result)
			h[i] = p
		}
		r.History = h
	}
	return r
}

// notFoundError is a missing record. Its message is made only when asked:
// a charge asks for its intent's ledger before the first success writes it,
// so not found is the common answer, and fmt.Errorf cost it four
// allocations each time.
type notFoundError struct{ op, namespace, intentID string }

func (e *notFoundError) Error() string {
	return fmt.Sprintf("memstore: %s %q/%q: %v", e.op, e.namespace, e.intentID, idempay.ErrNotFound)
}

func (e *notFoundError) Unwrap() error { return idempay.ErrNotFound }
