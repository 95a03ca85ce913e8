package storetest_test

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

// faultyStore is a map store with switchable defects. With no defect it is
// a correct KeyStore, which shows that the suite passes a correct store;
// each defect is a mistake a real store could make, and the suite must
// catch every one of them (see TestRunCatchesDefects).
type faultyStore struct {
	defect string // one of the keys of defects, or "" for none

	mu   sync.Mutex
	recs map[string]idempay.Record
}

// defects maps each defect of faultyStore to the subtests of Run that must
// fail because of it. Subtest names are as `go test -v` prints them.
var defects = map[string][]string{
	"reserve-overwrites":    {"Reserve/existing_intent_keeps_the_first_record"},
	"check-then-insert":     {"Concurrency/racing_Reserves_of_one_intent_create_it_once"},
	"joined-key":            {"Reserve/separator_characters_do_not_merge_intents"},
	"no-namespace":          {"Namespace/same_intent_ID_in_two_namespaces_is_two_records"},
	"lease-ignored":         {"Lease/another_owner_is_refused_before_the_lease_ends"},
	"lease-end-exclusive":   {"Lease/another_owner_claims_once_the_lease_has_ended"},
	"closed-claimable":      {"Lease/a_closed_record_is_never_claimed"},
	"pending-not-claimable": {"Lease/a_pending_record_is_claimed_like_an_open_one"},
	"claim-keeps-lease":     {"Lease/the_holder_claims_its_own_lease_again"},
	"resolve-no-key-check":  {"Resolve/another_key_returns_ErrKeyMismatch_and_changes_nothing"},
	"resolve-reopens":       {"Resolve/closed_record_returns_ErrAlreadyResolved_and_changes_nothing"},
	"resolve-missing-nil":   {"Resolve/missing_record_returns_ErrNotFound"},
	"resolve-keeps-lease":   {"Lease/a_released_lease_is_claimable_at_once", "Resolve/State_Open_only_releases_the_lease"},
	"open-reopens-pending":  {"Resolve/State_Open_only_releases_the_lease"},
	"empty-result-keeps":    {"Resolve/empty_ProviderRef_and_nil_Result_keep_the_stored_ones"},
	"result-aliased":        {"Resolve/Result_is_copied_in_and_out"},
	"result-as-text":        {"Resolve/Result_bytes_round-trip_exactly"},
	"resolve-race":          {"Concurrency/racing_Resolves_of_one_record_close_it_once"},
	"millisecond-times":     {"Load/returns_every_field_at_microsecond_precision"},
	"load-missing-nil":      {"Load/missing_record_returns_ErrNotFound"},
	"list-newest-first":     {"ListOpen/only_open_and_pending_records_of_the_namespace,_oldest_first"},
	"list-includes-closed":  {"ListOpen/only_open_and_pending_records_of_the_namespace,_oldest_first"},
	"list-ignores-limit":    {"ListOpen/limit_is_honoured_and_zero_or_less_means_all"},
	"list-zero-means-none":  {"ListOpen/limit_is_honoured_and_zero_or_less_means_all"},
	"list-prefix-namespace": {"ListOpen/unknown_namespace_returns_nothing"},
	"expire-deletes-open":   {"Expire/never_deletes_open_or_pending_records", "Expire/deletes_closed_records_created_before_the_cutoff"},
	"expire-inclusive":      {"Expire/deletes_closed_records_created_before_the_cutoff"},
	"expire-miscounts":      {"Expire/deletes_closed_records_created_before_the_cutoff"},
	"expire-by-updated":     {"Expire/deletes_closed_records_created_before_the_cutoff"},
	"ignores-context":       {"Context/Reserve_with_a_cancelled_context_fails"},
	"created-unclaimed":     {"Reserve/absent_intent_is_created_and_claimed_as_given"},
	"pending-is-final":      {"Resolve/open_to_pending_to_succeeded", "Resolve/open_or_pending_to_failed"},
	"resolve-no-context":    {"Context/every_operation_honours_a_cancelled_context"},
	"distinct-collide":      {"Concurrency/racing_Reserves_of_distinct_intents_all_create"},
	"resolve-ignores-owner": {
		"Lease/release_by_another_owner_returns_ErrLeaseLost_and_changes_nothing",
		"Lease/a_late_release_after_a_takeover_keeps_the_new_holder's_lease",
		"Concurrency/a_release_racing_a_takeover_never_frees_the_new_holder's_lease",
	},
	"owner-never-matches":      {"Lease/release_by_the_holder's_owner_frees_the_lease"},
	"owner-checked-when-empty": {"Lease/an_empty_LeaseOwner_skips_the_owner_check"},
	"owner-checked-first":      {"Resolve/errors_come_in_order:_not_found,_key,_closed,_then_lease_owner"},
	"owner-check-then-write":   {"Concurrency/a_release_racing_a_takeover_never_frees_the_new_holder's_lease"},
}

func newFaultyStore(defect string) *faultyStore {
	if _, ok := defects[defect]; defect != "" && !ok {
		panic("faultyStore: unknown defect " + defect)
	}
	return &faultyStore{defect: defect, recs: make(map[string]idempay.Record)}
}

func (s *faultyStore) has(d string) bool { return s.defect == d }

// key is the map key of an intent. The correct form cannot collide because
// the namespace is length-prefixed; two defects replace it.
func (s *faultyStore) key(ns, id string) string {
	switch {
	case s.has("joined-key"):
		return ns + ":" + id
	case s.has("no-namespace"):
		return id
	case s.has("distinct-collide") && len(id) > 8:
		// An intent ID column too short for the IDs it is given.
		id = id[:8]
	}
	return fmt.Sprintf("%d:%s%s", len(ns), ns, id)
}

func (s *faultyStore) copyIn(r idempay.Record) idempay.Record {
	if s.has("millisecond-times") {
		r.CreatedAt = r.CreatedAt.Truncate(time.Millisecond)
		r.UpdatedAt = r.UpdatedAt.Truncate(time.Millisecond)
		r.LeaseUntil = r.LeaseUntil.Truncate(time.Millisecond)
	}
	if !s.has("result-aliased") {
		r.Result = bytes.Clone(r.Result)
	}
	return r
}

func (s *faultyStore) copyOut(r idempay.Record) idempay.Record {
	if !s.has("result-aliased") {
		r.Result = bytes.Clone(r.Result)
	}
	return r
}

func (s *faultyStore) Reserve(ctx context.Context, r idempay.Record) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil && !s.has("ignores-context") {
		return idempay.Reservation{}, err
	}
	k := s.key(r.Namespace, r.IntentID)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[k]
	if s.has("check-then-insert") && !ok {
		// The lock is dropped between the check and the insert, as
		// with a SELECT followed by an INSERT outside a transaction.
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		ok = false
	}
	if !ok || s.has("reserve-overwrites") {
		s.recs[k] = s.copyIn(r)
		return idempay.Reservation{Record: s.copyOut(s.recs[k]), Created: true, Claimed: !s.has("created-unclaimed")}, nil
	}
	free := cur.LeaseOwner == "" || !r.UpdatedAt.Before(cur.LeaseUntil) || cur.LeaseOwner == r.LeaseOwner
	if s.has("lease-end-exclusive") {
		free = cur.LeaseOwner == "" || r.UpdatedAt.After(cur.LeaseUntil) || cur.LeaseOwner == r.LeaseOwner
	}
	if s.has("pending-not-claimable") && cur.State == idempay.StatePending {
		free = false
	}
	if (cur.State.Closed() && !s.has("closed-claimable")) || (!free && !s.has("lease-ignored")) {
		return idempay.Reservation{Record: s.copyOut(cur)}, nil
	}
	if !s.has("claim-keeps-lease") || cur.LeaseOwner != r.LeaseOwner {
		cur.LeaseOwner, cur.LeaseUntil = r.LeaseOwner, r.LeaseUntil
	}
	cur.UpdatedAt = r.UpdatedAt
	s.recs[k] = s.copyIn(cur)
	return idempay.Reservation{Record: s.copyOut(cur), Claimed: true}, nil
}

func (s *faultyStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil && !s.has("resolve-no-context") {
		return err
	}
	k := s.key(res.Namespace, res.IntentID)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[k]
	// The owner check, which must come after the others: a lease owner
	// that does not hold the lease loses it.
	lost := res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner
	switch {
	case s.has("resolve-ignores-owner"):
		lost = false
	case s.has("owner-never-matches"):
		// Compares with the wrong field: the holder is refused.
		lost = res.LeaseOwner != "" && cur.Key != res.LeaseOwner
	case s.has("owner-checked-when-empty"):
		lost = cur.LeaseOwner != res.LeaseOwner
	}
	switch {
	case ok && lost && s.has("owner-checked-first"):
		return fmt.Errorf("faulty: %w", idempay.ErrLeaseLost)
	case !ok && s.has("resolve-missing-nil"):
		return nil
	case !ok:
		return fmt.Errorf("faulty: %w", idempay.ErrNotFound)
	case cur.Key != res.Key && !s.has("resolve-no-key-check"):
		return fmt.Errorf("faulty: %w", idempay.ErrKeyMismatch)
	case cur.State.Closed() && !s.has("resolve-reopens"):
		return fmt.Errorf("faulty: %w", idempay.ErrAlreadyResolved)
	case lost:
		return fmt.Errorf("faulty: %w", idempay.ErrLeaseLost)
	}
	if s.has("resolve-race") || (s.has("owner-check-then-write") && res.LeaseOwner != "") {
		// The lock is dropped between the checks and the write, as
		// with a SELECT then an UPDATE that does not repeat them.
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
	}
	switch {
	case s.has("pending-is-final") && cur.State == idempay.StatePending:
		// The pending record keeps its state: it can never be settled.
	case res.State != idempay.StateOpen || s.has("open-reopens-pending"):
		cur.State = res.State
	}
	if res.ProviderRef != "" {
		cur.ProviderRef = res.ProviderRef
	}
	switch {
	case s.has("result-as-text") && res.Result != nil:
		cur.Result = []byte(strings.ToValidUTF8(string(res.Result), "\uFFFD"))
	case s.has("empty-result-keeps") && len(res.Result) > 0, !s.has("empty-result-keeps") && res.Result != nil:
		cur.Result = res.Result
	}
	cur.UpdatedAt = res.At
	if !s.has("resolve-keeps-lease") {
		cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
	}
	s.recs[k] = s.copyIn(cur)
	return nil
}

func (s *faultyStore) Load(ctx context.Context, ns, id string) (idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return idempay.Record{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[s.key(ns, id)]
	if !ok && !s.has("load-missing-nil") {
		return idempay.Record{}, fmt.Errorf("faulty: %w", idempay.ErrNotFound)
	}
	return s.copyOut(cur), nil
}

func (s *faultyStore) ListOpen(ctx context.Context, ns string, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []idempay.Record
	for _, r := range s.recs {
		sameNS := r.Namespace == ns || (s.has("list-prefix-namespace") && strings.HasPrefix(r.Namespace, ns))
		if sameNS && (!r.State.Closed() || s.has("list-includes-closed")) {
			out = append(out, s.copyOut(r))
		}
	}
	slices.SortFunc(out, func(a, b idempay.Record) int {
		c := cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.IntentID, b.IntentID))
		if s.has("list-newest-first") {
			return -c
		}
		return c
	})
	switch {
	case s.has("list-zero-means-none") && limit <= 0:
		return nil, nil
	case limit > 0 && limit < len(out) && !s.has("list-ignores-limit"):
		out = out[:limit]
	}
	return out, nil
}

func (s *faultyStore) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, r := range s.recs {
		age := r.CreatedAt
		if s.has("expire-by-updated") {
			age = r.UpdatedAt
		}
		old := age.Before(cutoff) || (s.has("expire-inclusive") && age.Equal(cutoff))
		if old && (r.State.Closed() || s.has("expire-deletes-open")) {
			delete(s.recs, k)
			n++
		}
	}
	if s.has("expire-miscounts") {
		return 0, nil
	}
	return n, nil
}
