package storetest_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/idempay/idempay"
)

// faultyStore is a map store with switchable defects. With no defect it is
// a correct KeyStore, which shows that the suite passes a correct store;
// each defect is a mistake a real store could make against the contract,
// and the suite must catch every one of them (see TestRunCatchesDefects).
type faultyStore struct {
	defect string // one of the keys of defects, or "" for none

	mu   sync.Mutex
	recs map[string]idempay.Record
	// inflight counts the Reserves and Resolves under way, reads the
	// records they have read under the lock; see unlocked.
	inflight atomic.Int32
	reads    atomic.Int64
	// firstClosed is when each record first closed, kept apart from the
	// record as a column a store might add for its sweep; only the
	// expire-first-closing defect reads it.
	firstClosed map[string]time.Time
	locale      *collate.Collator
}

// defects maps each defect of faultyStore to the subtests of Run that must
// fail because of it. Subtest names are as `go test -v` prints them.
var defects = map[string][]string{
	// Reserve: inserting and reading.
	"reserve-overwrites":     {"Reserve/existing_intent_keeps_the_first_record"},
	"created-unclaimed":      {"Reserve/absent_intent_is_inserted_open,_created_and_claimed,_on_the_store's_clock"},
	"created-lost-on-repeat": {"Reserve/a_repeat_by_the_creator_reports_Created_again;_another_owner's_does_not"},
	"created-by-key-only":    {"Reserve/a_repeat_by_the_creator_reports_Created_again;_another_owner's_does_not"},
	"invalid-accepted":       {"Reserve/an_invalid_request_is_refused_and_stores_nothing"},
	"joined-key":             {"Reserve/separator_characters_do_not_merge_intents"},
	"no-namespace":           {"Namespace/same_intent_ID_in_two_namespaces_is_two_records"},
	"millisecond-times":      {"Load/returns_what_Reserve_and_Resolve_stored,_at_microsecond_precision"},

	// Leases.
	"lease-ignored":              {"Lease/another_owner_is_refused_while_the_lease_runs"},
	"lease-end-exclusive":        {"Lease/the_lease_is_free_from_LeaseUntil_on,_not_later"},
	"lease-grace":                {"Lease/the_lease_is_free_from_LeaseUntil_on,_not_later"},
	"claim-lease-from-created":   {"Lease/another_owner_claims_once_the_lease_has_run_out"},
	"renew-keeps-lease":          {"Lease/the_holder_renews_its_lease_to_Now+Lease"},
	"claim-ignores-fingerprint":  {"Lease/a_claim_needs_the_stored_fingerprint"},
	"holder-ignores-fingerprint": {"Lease/a_claim_needs_the_stored_fingerprint"},
	"pending-not-claimable":      {"Lease/a_pending_record_is_claimed_like_an_open_one"},
	"closed-claimable":           {"Lease/a_closed_record_is_never_claimed"},
	"resolve-keeps-lease":        {"Lease/a_released_lease_is_claimable_at_once", "Resolve/State_Open_only_releases_the_lease"},
	"resolve-ignores-owner": {
		"Lease/release_by_another_owner_returns_ErrLeaseLost_and_changes_nothing",
		"Lease/a_late_release_after_a_takeover_keeps_the_new_holder's_lease",
		"Concurrency/a_release_racing_a_takeover_never_frees_the_new_holder's_lease",
	},
	"owner-never-matches":      {"Lease/release_by_the_holder's_owner_frees_the_lease"},
	"owner-checked-when-empty": {"Lease/an_empty_LeaseOwner_skips_the_owner_check"},
	"owner-checked-first":      {"Resolve/errors_come_in_order:_not_found,_key,_closed,_then_lease_owner"},

	// Attempts.
	"new-attempt-without-history": {"Attempt/a_failed_record_and_the_next_attempt_number_begin_a_new_attempt", "Attempt/History_round-trips_exactly,_several_attempts_deep"},
	"new-attempt-any-number":      {"Attempt/the_same_or_a_skipped_attempt_number_begins_nothing"},
	"new-attempt-after-success":   {"Attempt/only_a_failed_record_is_followed_by_a_new_attempt"},
	"new-attempt-from-unsettled":  {"Attempt/only_a_failed_record_is_followed_by_a_new_attempt"},
	"new-attempt-keeps-outcome":   {"Attempt/a_failed_record_and_the_next_attempt_number_begin_a_new_attempt"},
	"new-attempt-keeps-created":   {"Attempt/a_failed_record_and_the_next_attempt_number_begin_a_new_attempt"},
	"history-drops-result":        {"Attempt/History_round-trips_exactly,_several_attempts_deep"},
	"history-aliased":             {"Resolve/Result_and_History_are_copied_in_and_out"},

	// Resolve.
	"resolve-missing-nil":     {"Resolve/missing_record_returns_ErrNotFound"},
	"resolve-no-key-check":    {"Resolve/another_key_returns_ErrKeyMismatch_and_changes_nothing"},
	"resolve-reopens":         {"Resolve/closed_record_returns_ErrAlreadyResolved_and_changes_nothing"},
	"resolve-no-updatedat":    {"Resolve/open_to_pending_to_succeeded,_stamped_by_the_store"},
	"pending-is-final":        {"Resolve/open_to_pending_to_succeeded,_stamped_by_the_store", "Resolve/open_or_pending_to_failed"},
	"closedat-not-stamped":    {"Resolve/ClosedAt_is_stamped_on_closing_and_zero_while_unsettled"},
	"closedat-on-any-resolve": {"Resolve/ClosedAt_is_stamped_on_closing_and_zero_while_unsettled"},
	"open-reopens-pending":    {"Resolve/State_Open_only_releases_the_lease"},
	"empty-result-keeps":      {"Resolve/empty_ProviderRef_and_nil_Result_keep_the_stored_ones"},
	"result-as-text":          {"Resolve/Result_bytes_round-trip_exactly"},
	"result-aliased":          {"Resolve/Result_and_History_are_copied_in_and_out"},
	"durable-skips-checks":    {"Resolve/Durable_writes_behave_like_any_other"},
	"invalid-state-written":   {"Resolve/a_state_that_is_not_one_of_the_four_is_refused"},
	"load-missing-nil":        {"Load/missing_record_returns_ErrNotFound"},

	// ListOpen.
	"list-newest-first":         {"ListOpen/only_open_and_pending_records_of_the_namespace,_in_(CreatedAt,_IntentID)_order"},
	"list-includes-closed":      {"ListOpen/only_open_and_pending_records_of_the_namespace,_in_(CreatedAt,_IntentID)_order"},
	"list-ignores-limit":        {"ListOpen/limit_is_honoured"},
	"list-limit-zero-means-all": {"ListOpen/a_limit_of_zero_or_less_is_an_error"},
	"list-no-cursor":            {"ListOpen/the_cursor_pages_past_hundreds_of_older_open_records_to_every_one"},
	"list-cursor-inclusive":     {"ListOpen/the_cursor_pages_past_hundreds_of_older_open_records_to_every_one"},
	"list-cursor-by-id":         {"ListOpen/the_cursor_pages_past_hundreds_of_older_open_records_to_every_one"},
	"list-cursor-by-time":       {"ListOpen/intent_IDs_at_one_CreatedAt_are_ordered_bytewise"},
	"list-locale-order":         {"ListOpen/intent_IDs_at_one_CreatedAt_are_ordered_bytewise"},
	"list-cursor-by-lookup":     {"ListOpen/the_cursor_is_a_place,_not_a_record"},
	"list-cursor-as-text":       {"ListOpen/the_cursor_is_a_place,_not_a_record"},
	"list-prefix-namespace":     {"ListOpen/unknown_namespace_returns_nothing"},

	// Expire.
	"expire-by-created":        {"Expire/retention_runs_from_ClosedAt,_not_CreatedAt"},
	"expire-deletes-open":      {"Expire/never_deletes_open_or_pending_records"},
	"expire-miscounts":         {"Expire/deletes_records_closed_more_than_retention_ago,_in_every_namespace,_and_counts_them"},
	"expire-retention-seconds": {"Expire/deletes_records_closed_more_than_retention_ago,_in_every_namespace,_and_counts_them"},
	"expire-first-closing":     {"Expire/a_record_that_began_a_new_attempt_is_judged_by_its_current_attempt"},

	// Concurrency and contexts.
	"check-then-insert":      {"Concurrency/racing_Reserves_of_one_intent_create_it_once"},
	"distinct-collide":       {"Concurrency/racing_Reserves_of_distinct_intents_all_create"},
	"claim-check-then-write": {"Concurrency/racing_claims_of_a_lease_that_ran_out_give_it_to_one_owner"},
	"new-attempt-race":       {"Concurrency/racing_new_attempts_of_a_failed_intent_begin_one"},
	"resolve-race":           {"Concurrency/racing_Resolves_of_one_record_close_it_once"},
	"owner-check-then-write": {"Concurrency/a_release_racing_a_takeover_never_frees_the_new_holder's_lease"},
	"ignores-context":        {"Context/Reserve_with_a_cancelled_context_fails"},
	"resolve-no-context":     {"Context/every_other_operation_honours_a_cancelled_context"},
	"expire-no-context":      {"Context/every_other_operation_honours_a_cancelled_context"},
}

func newFaultyStore(defect string) *faultyStore {
	if _, ok := defects[defect]; defect != "" && !ok {
		panic("faultyStore: unknown defect " + defect)
	}
	return &faultyStore{
		defect:      defect,
		recs:        make(map[string]idempay.Record),
		firstClosed: make(map[string]time.Time),
		locale:      collate.New(language.English),
	}
}

func (s *faultyStore) has(d string) bool { return s.defect == d }

// clock is the store's clock, at microsecond precision.
func (s *faultyStore) clock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// unlocked drops the lock between a check and the write that depends on
// it, as a store does that reads in one statement and writes in another
// without repeating its conditions. When other calls are in flight, the
// window stays open until one of them has read the record too (or 100 ms
// have passed), so that the store loses the races the suite sets up on a
// loaded machine as surely as on an idle one.
func (s *faultyStore) unlocked() {
	seen := s.reads.Load()
	s.mu.Unlock()
	// Give the racers time to arrive and read, generously: on a loaded
	// machine a 100 ms window let a racer miss it, and the defect went
	// uncaught (TestRunCatchesDefects, resolve-race, once in CI). The wait
	// ends as soon as another caller has read, so a fast machine pays little.
	time.Sleep(5 * time.Millisecond)
	deadline := time.Now().Add(time.Second)
	for s.inflight.Load() > 1 && s.reads.Load() == seen && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
	s.mu.Lock()
}

// key is the map key of an intent. The correct form cannot collide because
// the namespace is length-prefixed; three defects replace it.
func (s *faultyStore) key(ns, id string) string {
	switch {
	case s.has("joined-key"):
		return ns + ":" + id
	case s.has("no-namespace"):
		return id
	case s.has("distinct-collide") && len(id) > 12:
		// An intent ID column too short for the IDs it is given.
		id = id[:12]
	}
	return fmt.Sprintf("%d:%s%s", len(ns), ns, id)
}

func (s *faultyStore) put(r idempay.Record) {
	if s.has("millisecond-times") {
		// A timestamp(3) column.
		r.CreatedAt = r.CreatedAt.Truncate(time.Millisecond)
		r.UpdatedAt = r.UpdatedAt.Truncate(time.Millisecond)
		r.ClosedAt = r.ClosedAt.Truncate(time.Millisecond)
		r.LeaseUntil = r.LeaseUntil.Truncate(time.Millisecond)
	}
	if !s.has("result-aliased") {
		r.Result = bytes.Clone(r.Result)
	}
	s.recs[s.key(r.Namespace, r.ID)] = r
}

// out is the copy of r a caller gets.
func (s *faultyStore) out(r idempay.Record) idempay.Record {
	if !s.has("result-aliased") {
		r.Result = bytes.Clone(r.Result)
	}
	if !s.has("history-aliased") && r.History != nil {
		h := slices.Clone(r.History)
		for i := range h {
			h[i].Result = bytes.Clone(h[i].Result)
		}
		r.History = h
	}
	return r
}

func (s *faultyStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if err := ctx.Err(); err != nil && !s.has("ignores-context") {
		return idempay.Reservation{}, err
	}
	if err := idempay.CheckReserveRequest(r); err != nil && !s.has("invalid-accepted") {
		return idempay.Reservation{}, err
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[s.key(r.Namespace, r.ID)]
	s.reads.Add(1)
	if s.has("check-then-insert") && !ok {
		s.unlocked()
	}
	now := s.clock()
	switch {
	case !ok || s.has("reserve-overwrites"):
		rec := begin(idempay.Record{Namespace: r.Namespace, ID: r.ID}, r, now)
		s.put(rec)
		return idempay.Reservation{Record: s.out(rec), Created: true, Claimed: !s.has("created-unclaimed"), Now: now}, nil
	case s.beginsAttempt(cur, r):
		if s.has("new-attempt-race") {
			s.unlocked()
			now = s.clock()
		}
		past := cur.Past()
		if s.has("history-drops-result") {
			past.ProviderRef, past.Result = "", nil
		}
		next := begin(cur, r, now)
		if !s.has("new-attempt-without-history") {
			next.History = append(slices.Clone(cur.History), past)
		}
		if s.has("new-attempt-keeps-outcome") {
			next.ClosedAt, next.ProviderRef, next.Result = cur.ClosedAt, cur.ProviderRef, cur.Result
		}
		if s.has("new-attempt-keeps-created") {
			next.CreatedAt = cur.CreatedAt
		}
		s.put(next)
		return idempay.Reservation{Record: s.out(next), Created: true, Claimed: true, Now: now}, nil
	case s.claimable(cur, r, now):
		if s.has("claim-check-then-write") {
			s.unlocked()
			now = s.clock()
		}
		switch {
		case s.has("renew-keeps-lease") && cur.LeaseOwner == r.Owner:
		case s.has("claim-lease-from-created"):
			cur.LeaseUntil = cur.CreatedAt.Add(r.Lease)
		default:
			cur.LeaseUntil = now.Add(r.Lease)
		}
		cur.LeaseOwner, cur.UpdatedAt = r.Owner, now
		s.put(cur)
		return idempay.Reservation{Record: s.out(cur), Created: s.createdFor(cur, r), Claimed: true, Now: now}, nil
	}
	return idempay.Reservation{Record: s.out(cur), Now: now}, nil
}

// begin makes r the current attempt of rec, open and leased to r.Owner.
func begin(rec idempay.Record, r idempay.ReserveRequest, now time.Time) idempay.Record {
	return idempay.Record{
		Namespace: rec.Namespace, ID: rec.ID, Attempt: r.Attempt,
		Key: r.Key, Fingerprint: r.Fingerprint, State: idempay.StateOpen,
		CreatedAt: now, UpdatedAt: now, Creator: r.Owner,
		LeaseOwner: r.Owner, LeaseUntil: now.Add(r.Lease), History: rec.History,
	}
}

func (s *faultyStore) beginsAttempt(cur idempay.Record, r idempay.ReserveRequest) bool {
	switch {
	case s.has("new-attempt-any-number"):
		return cur.State == idempay.StateFailed && r.Attempt > cur.Attempt
	case s.has("new-attempt-after-success"):
		return cur.State.Closed() && r.Attempt == cur.Attempt+1
	case s.has("new-attempt-from-unsettled"):
		return r.Attempt == cur.Attempt+1
	}
	return cur.State == idempay.StateFailed && r.Attempt == cur.Attempt+1
}

func (s *faultyStore) claimable(cur idempay.Record, r idempay.ReserveRequest, now time.Time) bool {
	if cur.State.Closed() && !s.has("closed-claimable") {
		return false
	}
	if cur.State == idempay.StatePending && s.has("pending-not-claimable") {
		return false
	}
	sameParams := cur.Fingerprint == r.Fingerprint || s.has("claim-ignores-fingerprint") ||
		(s.has("holder-ignores-fingerprint") && cur.LeaseOwner == r.Owner)
	over := !now.Before(cur.LeaseUntil)
	switch {
	case s.has("lease-ignored"):
		over = true
	case s.has("lease-end-exclusive"):
		over = now.After(cur.LeaseUntil)
	case s.has("lease-grace"):
		// A margin for clock skew, which the store's one clock makes
		// needless and which keeps a crashed holder's intent stalled.
		over = !now.Before(cur.LeaseUntil.Add(time.Millisecond))
	}
	return sameParams && (cur.LeaseOwner == "" || cur.LeaseOwner == r.Owner || over)
}

func (s *faultyStore) createdFor(cur idempay.Record, r idempay.ReserveRequest) bool {
	switch {
	case s.has("created-lost-on-repeat"):
		return false
	case s.has("created-by-key-only"):
		return cur.Key == r.Key
	}
	return cur.Creator == r.Owner && cur.Key == r.Key && cur.Attempt == r.Attempt
}

func (s *faultyStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	if err := ctx.Err(); err != nil && !s.has("resolve-no-context") {
		return err
	}
	if !res.State.Valid() && !s.has("invalid-state-written") {
		return fmt.Errorf("faulty: invalid state %q", res.State)
	}
	k := s.key(res.Namespace, res.ID)
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[k]
	s.reads.Add(1)
	// The owner check, which must come after the others: a lease owner
	// that does not hold the lease loses it.
	lost := res.LeaseOwner != "" && cur.LeaseOwner != res.LeaseOwner
	switch {
	case s.has("resolve-ignores-owner"):
		lost = false
	case s.has("owner-never-matches"):
		// Compares with the wrong field: the holder is refused.
		lost = res.LeaseOwner != "" && cur.Creator+"/" != res.LeaseOwner
	case s.has("owner-checked-when-empty"):
		lost = cur.LeaseOwner != res.LeaseOwner
	}
	closed := cur.State.Closed() && !s.has("resolve-reopens") && !(s.has("durable-skips-checks") && res.Durable)
	switch {
	case ok && lost && s.has("owner-checked-first"):
		return fmt.Errorf("faulty: %w", idempay.ErrLeaseLost)
	case !ok && s.has("resolve-missing-nil"):
		return nil
	case !ok:
		return fmt.Errorf("faulty: %w", idempay.ErrNotFound)
	case cur.Key != res.Key && !s.has("resolve-no-key-check"):
		return fmt.Errorf("faulty: %w", idempay.ErrKeyMismatch)
	case closed:
		return fmt.Errorf("faulty: %w", idempay.ErrAlreadyResolved)
	case lost:
		return fmt.Errorf("faulty: %w", idempay.ErrLeaseLost)
	}
	if s.has("resolve-race") || (s.has("owner-check-then-write") && res.LeaseOwner != "") {
		s.unlocked()
	}
	now := s.clock()
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
	if (cur.State.Closed() && !s.has("closedat-not-stamped")) || s.has("closedat-on-any-resolve") {
		cur.ClosedAt = now
	}
	if cur.State.Closed() && s.firstClosed[k].IsZero() {
		s.firstClosed[k] = now
	}
	if !s.has("resolve-no-updatedat") {
		cur.UpdatedAt = now
	}
	if !s.has("resolve-keeps-lease") {
		cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
	}
	s.put(cur)
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
	return s.out(cur), nil
}

// compareIDs is the order of intent IDs among records of one CreatedAt.
func (s *faultyStore) compareIDs(a, b string) int {
	if s.has("list-locale-order") {
		// A database column with the server's default collation.
		return cmp.Or(s.locale.CompareString(a, b), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}

// after reports whether r comes after the cursor c.
func (s *faultyStore) after(c idempay.Cursor, r idempay.Record) bool {
	const layout = "2006-01-02 15:04:05.000000"
	switch {
	case s.has("list-no-cursor"):
		return true
	case s.has("list-cursor-by-id"):
		return r.ID > c.ID
	case s.has("list-cursor-by-time"):
		return r.CreatedAt.After(c.CreatedAt)
	case s.has("list-cursor-as-text"):
		// Sortable text keys, written without converting the cursor
		// to UTC.
		return cmp.Or(strings.Compare(r.CreatedAt.Format(layout), c.CreatedAt.Format(layout)), strings.Compare(r.ID, c.ID)) > 0
	}
	d := cmp.Or(r.CreatedAt.Compare(c.CreatedAt), s.compareIDs(r.ID, c.ID))
	return d > 0 || (d == 0 && s.has("list-cursor-inclusive"))
}

func (s *faultyStore) ListOpen(ctx context.Context, ns string, c idempay.Cursor, limit int) ([]idempay.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case limit <= 0 && s.has("list-limit-zero-means-all"):
		limit = math.MaxInt
	case limit <= 0:
		return nil, fmt.Errorf("faulty: limit %d", limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.recs[s.key(ns, c.ID)]; ok && s.has("list-cursor-by-lookup") {
		// Pages by the position of the cursor's record, as it is now.
		c.CreatedAt = cur.CreatedAt
	}
	var out []idempay.Record
	for _, r := range s.recs {
		sameNS := r.Namespace == ns || (s.has("list-prefix-namespace") && strings.HasPrefix(r.Namespace, ns))
		if sameNS && (!r.State.Closed() || s.has("list-includes-closed")) && s.after(c, r) {
			out = append(out, s.out(r))
		}
	}
	slices.SortFunc(out, func(a, b idempay.Record) int {
		d := cmp.Or(a.CreatedAt.Compare(b.CreatedAt), s.compareIDs(a.ID, b.ID))
		if s.has("list-newest-first") {
			return -d
		}
		return d
	})
	if limit < len(out) && !s.has("list-ignores-limit") {
		out = out[:limit]
	}
	return out, nil
}

func (s *faultyStore) Expire(ctx context.Context, retention time.Duration) (int, error) {
	if err := ctx.Err(); err != nil && !s.has("expire-no-context") {
		return 0, err
	}
	if s.has("expire-retention-seconds") {
		// An interval built from whole seconds.
		retention = retention.Truncate(time.Second)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.clock().Add(-retention)
	n := 0
	for k, r := range s.recs {
		at := r.ClosedAt
		switch {
		case s.has("expire-by-created"):
			at = r.CreatedAt
		case s.has("expire-first-closing") && !s.firstClosed[k].IsZero():
			at = s.firstClosed[k]
		}
		if (r.State.Closed() || s.has("expire-deletes-open")) && at.Before(cutoff) {
			delete(s.recs, k)
			delete(s.firstClosed, k)
			n++
		}
	}
	if s.has("expire-miscounts") {
		return 0, nil
	}
	return n, nil
}
