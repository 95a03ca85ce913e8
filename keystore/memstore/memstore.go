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

// Store is an in-memory KeyStore. The zero value is an empty store ready for
// use; New exists for symmetry with the other stores. A Store must not be
// copied after first use.
type Store struct {
	mu sync.RWMutex
	// byNS maps namespace, then intent ID, to the record. Grouping by
	// namespace keeps ListOpen from walking other namespaces' records.
	byNS map[string]map[string]idempay.Record
}

var _ idempay.KeyStore = (*Store)(nil)

// New returns an empty Store.
func New() *Store { return &Store{} }

// Reserve stores r if the intent has no record, or else returns the stored
// record and takes its lease for r.LeaseOwner when the record is not closed
// and its lease is free, expired at r.UpdatedAt or already held by
// r.LeaseOwner. A pending record can be claimed like an open one: its
// charge still has to be settled, and the lease keeps two instances from
// settling it at once. It returns an error if ctx is done or r.State is not
// a valid state.
func (s *Store) Reserve(ctx context.Context, r idempay.Record) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Reservation{}, err
	}
	if !r.State.Valid() {
		return idempay.Reservation{}, fmt.Errorf("memstore: reserve %q/%q: invalid state %q", r.Namespace, r.IntentID, r.State)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.byNS[r.Namespace][r.IntentID]
	if !ok {
		if s.byNS == nil {
			s.byNS = make(map[string]map[string]idempay.Record)
		}
		ns := s.byNS[r.Namespace]
		if ns == nil {
			ns = make(map[string]idempay.Record)
			s.byNS[r.Namespace] = ns
		}
		ns[r.IntentID] = clone(r)
		return idempay.Reservation{Record: clone(r), Created: true, Claimed: true}, nil
	}
	if !cur.ClaimableBy(r.LeaseOwner, r.UpdatedAt) {
		return idempay.Reservation{Record: clone(cur)}, nil
	}
	cur.LeaseOwner, cur.LeaseUntil, cur.UpdatedAt = r.LeaseOwner, r.LeaseUntil, r.UpdatedAt
	s.byNS[r.Namespace][r.IntentID] = cur
	return idempay.Reservation{Record: clone(cur), Claimed: true}, nil
}

// Resolve applies res to the stored record and releases its lease. It
// returns an error matching idempay.ErrNotFound, idempay.ErrKeyMismatch,
// idempay.ErrAlreadyResolved or (when res.LeaseOwner is set and does not
// hold the lease) idempay.ErrLeaseLost as the KeyStore contract says, and
// changes nothing in those cases. With res.State StateOpen the state is kept (an
// open record stays open, a pending one pending).
func (s *Store) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.State.Valid() {
		return fmt.Errorf("memstore: resolve %q/%q: invalid state %q", res.Namespace, res.IntentID, res.State)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.byNS[res.Namespace][res.IntentID]
	switch {
	case !ok:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.IntentID, idempay.ErrNotFound)
	case cur.Key != res.Key:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.IntentID, idempay.ErrKeyMismatch)
	case cur.State.Closed():
		return fmt.Errorf("memstore: resolve %q/%q (%s): %w", res.Namespace, res.IntentID, cur.State, idempay.ErrAlreadyResolved)
	case res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner:
		return fmt.Errorf("memstore: resolve %q/%q: %w", res.Namespace, res.IntentID, idempay.ErrLeaseLost)
	}
	if res.State != idempay.StateOpen {
		cur.State = res.State
	}
	if res.ProviderRef != "" {
		cur.ProviderRef = res.ProviderRef
	}
	if res.Result != nil {
		cur.Result = bytes.Clone(res.Result)
	}
	cur.UpdatedAt = res.At
	cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
	s.byNS[res.Namespace][res.IntentID] = cur
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
		return idempay.Record{}, fmt.Errorf("memstore: load %q/%q: %w", namespace, intentID, idempay.ErrNotFound)
	}
	return clone(cur), nil
}

// ListOpen returns copies of up to limit open and pending records of the
// namespace, oldest CreatedAt first (ties by intent ID, so that the order
// is stable). A limit of zero or less means no limit. It walks and sorts
// the whole namespace, which is fine for the sizes this store is meant for.
func (s *Store) ListOpen(ctx context.Context, namespace string, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var out []idempay.Record
	for _, r := range s.byNS[namespace] {
		if !r.State.Closed() {
			out = append(out, clone(r))
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b idempay.Record) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.IntentID, b.IntentID))
	})
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

// Expire deletes the succeeded and failed records created before cutoff,
// in every namespace, and returns how many it deleted. Open and pending
// records are never deleted.
func (s *Store) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, ns := range s.byNS {
		for id, r := range ns {
			if r.State.Closed() && r.CreatedAt.Before(cutoff) {
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

// clone returns r with its own copy of Result, so that neither the caller
// nor the store can change the other's bytes. nil stays nil.
func clone(r idempay.Record) idempay.Record {
	r.Result = bytes.Clone(r.Result)
	return r
}
