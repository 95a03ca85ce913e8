package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// The statements of the version-1 store (main before contract v2), word
// for word: how a database at schema 1 was written, and how a version-1
// binary still running during a rolling deploy writes a migrated one. They
// stamp the callers' instants ($6, $7, $5), not the server's.
const (
	v1InsertSQL = `INSERT INTO {t} (namespace, intent_id, key, fingerprint, state, created_at,
	updated_at, lease_owner, lease_until, provider_ref, result)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (namespace, intent_id) DO NOTHING`

	v1ResolveSQL = `UPDATE {t} SET
	state = CASE WHEN $4 = 'open' THEN state ELSE $4 END,
	updated_at = $5,
	lease_owner = '',
	lease_until = NULL,
	provider_ref = CASE WHEN $6 = '' THEN provider_ref ELSE $6 END,
	result = CASE WHEN $7::boolean THEN $8 ELSE result END
WHERE namespace = $1 AND intent_id = $2 AND key = $3
	AND state IN ('open', 'pending')
	AND ($9::text = '' OR lease_owner = $9::text)`
)

// v1Row is a record as the version-1 store wrote it.
type v1Row struct {
	id, state           string
	created, updated    time.Duration // before the test's start, on the client's clock
	leaseOwner          string
	leaseUntil          time.Duration // from the test's start; 0: no lease
	providerRef, result string
}

func (r v1Row) insert(t *testing.T, s *Store, start time.Time) {
	t.Helper()
	var until *time.Time
	if r.leaseOwner != "" {
		u := start.Add(r.leaseUntil)
		until = &u
	}
	var result []byte
	if r.result != "" {
		result = []byte(r.result)
	}
	exec(t, s, v1InsertSQL, "ns", r.id, "key-"+r.id, "fp-"+r.id, r.state, start.Add(-r.created),
		start.Add(-r.updated), r.leaseOwner, until, r.providerRef, result)
}

// v1Resolve resolves (ns, id) the way a version-1 binary does, at its own
// instant at.
func v1Resolve(t *testing.T, s *Store, id string, st idempay.State, at time.Time) {
	t.Helper()
	exec(t, s, v1ResolveSQL, "ns", id, "key-"+id, string(st), at, "", false, nil, "")
}

// v1Store returns a store whose schema is at version 1, made by the text of
// migration 1 itself, and a second store on the same schema that will
// migrate it when opened.
func v1Store(t *testing.T) (old *Store, upgrade func() *Store) {
	t.Helper()
	pool := newPool(t, poolConfig(t))
	schema := freshSchema(t, pool)
	old, err := New(t.Context(), pool, WithSchema(schema), WithoutMigration())
	if err != nil {
		t.Fatal(err)
	}
	if err := old.migrateTo(t.Context(), 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	if got := versionsApplied(t, old); !slices.Equal(got, []int{1}) {
		t.Fatalf("versions = %v; want [1]", got)
	}
	return old, func() *Store {
		s, err := New(t.Context(), pool, WithSchema(schema))
		if err != nil {
			t.Fatalf("New on a version-1 schema: %v", err)
		}
		return s
	}
}

// TestUpgradeFromVersion1 writes a version-1 database the way main did
// before contract v2, opens it with this store, and checks that every
// record is readable, that settled ones expire by the time they closed
// (their last update then), not by their creation, and that open ones can
// be claimed, and a failed one given a new attempt.
func TestUpgradeFromVersion1(t *testing.T) {
	old, upgrade := v1Store(t)
	start := time.Now().UTC().Truncate(time.Microsecond)
	const day = 24 * time.Hour
	rows := []v1Row{
		{id: "closed-long-ago", state: "succeeded", created: 10 * day, updated: 9 * day, result: `{"ok":1}`, providerRef: "ch_1"},
		{id: "closed-late", state: "open", created: 10 * day, updated: 10 * day},
		{id: "failed", state: "failed", created: 3 * day, updated: 2 * day, result: `{"declined":1}`},
		{id: "open-lease-over", state: "open", created: time.Hour, updated: time.Hour, leaseOwner: "v1-owner", leaseUntil: -time.Minute},
		{id: "open-free", state: "open", created: time.Hour, updated: time.Hour},
		{id: "pending", state: "pending", created: 2 * time.Hour, updated: time.Hour, providerRef: "pi_1"},
	}
	for _, r := range rows {
		r.insert(t, old, start)
	}
	v1Resolve(t, old, "closed-late", idempay.StateSucceeded, start.Add(-time.Hour))

	s := upgrade()
	if got := versionsApplied(t, s); !slices.Equal(got, allVersions()) {
		t.Fatalf("versions after the upgrade = %v; want %v", got, allVersions())
	}
	checkUpgradedRecords(t, s, start)

	if n, err := s.Expire(t.Context(), 7*day); err != nil || n != 1 {
		t.Errorf("Expire(7 days) after the upgrade = %d, %v; want 1: only the record closed 9 days ago", n, err)
	}
	if _, err := s.Load(t.Context(), "ns", "closed-long-ago"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("record closed 9 days ago: Load = %v; want it expired", err)
	}
	checkUpgradedClaims(t, s, start)
}

// checkUpgradedRecords loads the version-1 records after the upgrade.
func checkUpgradedRecords(t *testing.T, s *Store, start time.Time) {
	t.Helper()
	for id, closedAgo := range map[string]time.Duration{
		"closed-long-ago": 9 * 24 * time.Hour, "closed-late": time.Hour, "failed": 48 * time.Hour,
		"open-lease-over": 0, "open-free": 0, "pending": 0,
	} {
		rec, err := s.Load(t.Context(), "ns", id)
		if err != nil {
			t.Errorf("Load(%s) after the upgrade = %v", id, err)
			continue
		}
		if rec.Attempt != 1 || rec.Creator != "" || rec.History != nil || rec.Key != "key-"+id {
			t.Errorf("%s: attempt %d, creator %q, history %v, key %q; want attempt 1, no creator, no history, key-%s",
				id, rec.Attempt, rec.Creator, rec.History, rec.Key, id)
		}
		want := time.Time{}
		if closedAgo > 0 {
			want = start.Add(-closedAgo)
		}
		if !rec.ClosedAt.Equal(want) {
			t.Errorf("%s: ClosedAt = %s; want %s (its last update, for a settled record)", id, rec.ClosedAt, want)
		}
	}
}

// checkUpgradedClaims reserves the version-1 records that are open and
// begins a new attempt over the failed one.
func checkUpgradedClaims(t *testing.T, s *Store, start time.Time) {
	t.Helper()
	for _, id := range []string{"open-lease-over", "open-free", "pending"} {
		r := request("ns", id)
		r.Owner, r.Key = "v2-owner", "new-key"
		res := reserve(t, s, r)
		if !res.Claimed || res.Created || res.Record.Key != "key-"+id {
			t.Errorf("%s: Claimed %v, Created %v, key %q; want claimed with its old key key-%s",
				id, res.Claimed, res.Created, res.Record.Key, id)
		}
	}
	r := request("ns", "failed")
	r.Attempt, r.Key = 2, "key-2"
	res := reserve(t, s, r)
	if !res.Created || len(res.Record.History) != 1 {
		t.Fatalf("attempt 2 over a version-1 failure: Created %v, history %+v", res.Created, res.Record.History)
	}
	want := idempay.PastAttempt{Attempt: 1, Key: "key-failed", Fingerprint: "fp-failed", State: idempay.StateFailed,
		CreatedAt: start.Add(-72 * time.Hour), ClosedAt: start.Add(-48 * time.Hour), Result: []byte(`{"declined":1}`)}
	if got := res.Record.History[0]; got.Attempt != want.Attempt || got.Key != want.Key || !got.CreatedAt.Equal(want.CreatedAt) ||
		!got.ClosedAt.Equal(want.ClosedAt) || string(got.Result) != string(want.Result) || got.State != want.State {
		t.Errorf("History[0] = %+v\nwant         %+v", got, want)
	}
}

// TestVersion1BinaryAfterUpgrade runs the version-1 statements on a
// migrated schema, as an instance not yet redeployed does: its inserts are
// read as attempt 1, and the records it closes get closed_at from the
// server's clock (the trigger), so that they expire too.
func TestVersion1BinaryAfterUpgrade(t *testing.T) {
	s := openStore(t)
	start := time.Now().UTC().Truncate(time.Microsecond)
	v1Row{id: "a", state: "open", leaseOwner: "v1", leaseUntil: time.Minute}.insert(t, s, start)
	before := serverNow(t, s)
	v1Resolve(t, s, "a", idempay.StateSucceeded, start.Add(time.Hour)) // a fast clock
	after := serverNow(t, s)
	rec, err := s.Load(t.Context(), "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Attempt != 1 || rec.State != idempay.StateSucceeded || rec.ClosedAt.Before(before) || rec.ClosedAt.After(after) {
		t.Errorf("closed by a version-1 binary: attempt %d, %s, ClosedAt %s; want attempt 1, succeeded, closed on the server's clock between %s and %s",
			rec.Attempt, rec.State, rec.ClosedAt, before, after)
	}
	if n, err := s.Expire(t.Context(), -time.Second); err != nil || n != 1 {
		t.Errorf("Expire(-1s) = %d, %v; want the record closed by the version-1 binary deleted", n, err)
	}
}

// TestNewerSchemaLeftAlone records a version this package does not know
// and checks that Migrate applies nothing and fails nothing: an instance of
// this version keeps running while a newer one rolls out.
func TestNewerSchemaLeftAlone(t *testing.T) {
	s := openStore(t)
	exec(t, s, strings.ReplaceAll(recordVersionSQL, "{v}", s.versions()), SchemaVersion+1, "from the future")
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate on a newer schema = %v; want nil", err)
	}
	want := append(allVersions(), SchemaVersion+1)
	if got := versionsApplied(t, s); !slices.Equal(got, want) {
		t.Errorf("versions = %v; want %v, nothing applied", got, want)
	}
	reserve(t, s, request("ns", "a"))
}
