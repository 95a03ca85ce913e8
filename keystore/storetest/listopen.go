package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// listFixture fills s with records of namespace "ns" in every state,
// inserted out of CreatedAt order, plus an open record of namespace
// "other", and returns the IDs ListOpen("ns") must give, oldest first.
func listFixture(t *testing.T, s idempay.KeyStore) []string {
	t.Helper()
	// Seconds after t0 of each intent's CreatedAt, in insertion order.
	created := map[string]int{"o3": 3, "o1": 1, "o5": 5, "o2": 2, "o4": 4, "o7": 7, "o6": 6}
	for _, id := range []string{"o3", "o1", "o5", "o2", "o4", "o7", "o6"} {
		reserve(t, s, newRecord("ns", id, "key-"+id, "owner", t0.Add(time.Duration(created[id])*time.Second)))
	}
	reserve(t, s, newRecord("other", "o0", "key-o0", "owner", t0))
	final := map[string]idempay.State{"o2": idempay.StateSucceeded, "o4": idempay.StateFailed, "o5": idempay.StatePending}
	for id, state := range final {
		resolve(t, s, idempay.Resolution{Namespace: "ns", IntentID: id, Key: "key-" + id, State: state, At: t0.Add(time.Minute)})
	}
	return []string{"o1", "o3", "o5", "o6", "o7"}
}

// checkList compares the IDs of got with want and each returned record
// with what Load returns, since ListOpen must return whole records.
func checkList(t *testing.T, s idempay.KeyStore, call string, got []idempay.Record, want []string) {
	t.Helper()
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.IntentID
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("%s returned intents %v; want %v", call, ids, want)
		return
	}
	for _, r := range got {
		checkRecord(t, call+" must return the record Load returns", r, load(t, s, r.Namespace, r.IntentID))
	}
}

func listOpenCases() []testCase {
	return []testCase{{
		name: "ListOpen/only open and pending records of the namespace, oldest first",
		rule: "ListOpen returns the open and pending records of its namespace and no others, ordered by CreatedAt, oldest first",
		run: func(t *testing.T, s idempay.KeyStore) {
			want := listFixture(t, s)
			got, err := s.ListOpen(t.Context(), "ns", 0)
			if err != nil {
				t.Fatalf("ListOpen = %v; want no error", err)
			}
			checkList(t, s, `ListOpen("ns", 0)`, got, want)
		},
	}, {
		name: "ListOpen/limit is honoured and zero or less means all",
		rule: "ListOpen returns at most limit records, the oldest ones, and all of them when limit is zero or negative",
		run: func(t *testing.T, s idempay.KeyStore) {
			all := listFixture(t, s)
			for _, limit := range []int{1, 2, len(all), len(all) + 1, 1000, 0, -1} {
				got, err := s.ListOpen(t.Context(), "ns", limit)
				if err != nil {
					t.Fatalf("ListOpen(limit %d) = %v; want no error", limit, err)
				}
				want := all
				if limit > 0 && limit < len(all) {
					want = all[:limit]
				}
				checkList(t, s, fmt.Sprintf(`ListOpen("ns", %d)`, limit), got, want)
			}
		},
	}, {
		name: "ListOpen/unknown namespace returns nothing",
		rule: "ListOpen of a namespace without records returns no records and no error",
		run: func(t *testing.T, s idempay.KeyStore) {
			listFixture(t, s)
			got, err := s.ListOpen(t.Context(), "n", 0) // a prefix of "ns"
			if err != nil || len(got) != 0 {
				t.Errorf(`ListOpen("n", 0) = %d records, %v; want none and no error`, len(got), err)
			}
		},
	}}
}
