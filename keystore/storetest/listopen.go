package storetest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// listOrder is ListOpen's order: CreatedAt, then the intent ID compared
// bytewise (as Go compares strings, and as a "C" collation does).
func listOrder(a, b idempay.Record) int {
	return cmp.Or(a.CreatedAt.Truncate(us).Compare(b.CreatedAt.Truncate(us)), strings.Compare(a.ID, b.ID))
}

// past reports whether r comes strictly after the cursor c.
func past(c idempay.Cursor, r idempay.Record) bool {
	return listOrder(r, idempay.Record{CreatedAt: c.CreatedAt, ID: c.ID}) > 0
}

// list calls s.ListOpen and stops the case on error.
func list(t *testing.T, s idempay.KeyStore, ns string, after idempay.Cursor, limit int) []idempay.Record {
	t.Helper()
	got, err := s.ListOpen(t.Context(), ns, after, limit)
	if err != nil {
		t.Fatalf("ListOpen(%q, after (%s, %q), %d) = %v; want no error", ns, fmtTime(after.CreatedAt), after.ID, limit, err)
	}
	return got
}

func ids(recs []idempay.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// checkList compares the intents of got with those of want, in order, and
// each returned record with what Load returns, since ListOpen must return
// whole records.
func checkList(t *testing.T, s idempay.KeyStore, call string, got, want []idempay.Record) {
	t.Helper()
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Errorf("%s returned intents %q; want %q", call, g, w)
		return
	}
	for _, r := range got {
		checkRecord(t, call+" must return the record Load returns", r, load(t, s, r.Namespace, r.ID))
	}
}

// listFixture fills s with records of namespace "ns" in every state and
// history, inserted out of intent ID order, and open records of the same
// IDs in namespace "other"; it returns the records ListOpen("ns") must
// give, in order.
func listFixture(t *testing.T, s idempay.KeyStore) []idempay.Record {
	t.Helper()
	recs := map[string]idempay.Record{}
	for _, id := range []string{"o-open", "o-succeeded", "B", "o-pending", "o-failed", "a", "o-released", "o-retried", "o-claimed"} {
		recs[id] = reserve(t, s, request(id, "owner-a")).Record
		other := request(id, "owner-a")
		other.Namespace = "other"
		reserve(t, s, other)
	}
	settle := func(id string, res idempay.Resolution) {
		recs[id] = apply(t, s, id, recs[id], res)
	}
	settle("o-succeeded", resolution(recs["o-succeeded"], idempay.StateSucceeded))
	settle("o-pending", resolution(recs["o-pending"], idempay.StatePending))
	settle("o-failed", resolution(recs["o-failed"], idempay.StateFailed))
	settle("o-released", release(recs["o-released"], "owner-a"))
	settle("o-claimed", release(recs["o-claimed"], "owner-a"))
	b := request("o-claimed", "owner-b")
	recs["o-claimed"] = claimed(recs["o-claimed"], b, reserve(t, s, b).Now)
	settle("o-retried", resolution(recs["o-retried"], idempay.StateFailed))
	next := nextAttempt("o-retried", 2, "owner-b")
	recs["o-retried"] = begun(recs["o-retried"], next, reserve(t, s, next).Now)

	var want []idempay.Record
	for _, r := range recs {
		if !r.State.Closed() {
			want = append(want, r)
		}
	}
	slices.SortFunc(want, listOrder)
	return want
}

func listOpenCases() []testCase {
	return []testCase{{
		name: "ListOpen/only open and pending records of the namespace, in (CreatedAt, IntentID) order",
		rule: "ListOpen from the zero Cursor returns the open and pending records of its namespace and no others (not closed ones, not another namespace's), whole as Load returns them, in (CreatedAt, IntentID) order; a record that began a new attempt is at its new attempt's CreatedAt",
		run: func(t *testing.T, s idempay.KeyStore) {
			want := listFixture(t, s)
			checkList(t, s, `ListOpen("ns", zero cursor, 100)`, list(t, s, "ns", idempay.Cursor{}, 100), want)
		},
	}, {
		name: "ListOpen/limit is honoured",
		rule: "ListOpen returns at most limit records, the first ones in its order",
		run: func(t *testing.T, s idempay.KeyStore) {
			all := listFixture(t, s)
			for _, limit := range []int{1, 2, len(all) - 1, len(all), len(all) + 1, 1000} {
				got := list(t, s, "ns", idempay.Cursor{}, limit)
				checkList(t, s, fmt.Sprintf(`ListOpen("ns", zero cursor, %d)`, limit), got, all[:min(limit, len(all))])
			}
		},
	}, {
		name: "ListOpen/a limit of zero or less is an error",
		rule: "ListOpen with a limit of zero or less returns an error, not every record (which could be millions) and not an empty page (which would end a caller's paging)",
		run: func(t *testing.T, s idempay.KeyStore) {
			listFixture(t, s)
			for _, limit := range []int{0, -1, math.MinInt} {
				if got, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, limit); err == nil {
					t.Errorf(`ListOpen("ns", zero cursor, %d) = %d records and no error; want an error`, limit, len(got))
				}
			}
		},
	}, {
		name: "ListOpen/the cursor pages past hundreds of older open records to every one",
		rule: "Paging ListOpen with the Cursor of the last record of each page returns, after hundreds of older open and pending records (abandoned ones that never settle), every open record exactly once, each page strictly after its cursor and in order, including records created at the same instant",
		run: func(t *testing.T, s idempay.KeyStore) {
			var want []idempay.Record
			for i := range 250 {
				id := fmt.Sprintf("old-%03d", i)
				r := reserve(t, s, request(id, "owner-a")).Record
				switch {
				case i%10 == 9:
					resolve(t, s, resolution(r, idempay.StateSucceeded))
					continue
				case i%2 == 0:
					resolve(t, s, resolution(r, idempay.StatePending))
				}
				want = append(want, r)
			}
			// Newer records in a burst, so that a fast store stamps
			// some of them with the same instant; their IDs sort
			// before the older ones' and not in numeric order.
			const callers, each = 8, 5
			burst := make([]idempay.Reservation, callers*each)
			together(callers, func(g int) {
				for j := range each {
					i := g*each + j
					var err error
					if burst[i], err = s.Reserve(t.Context(), request(fmt.Sprintf("new-%d", i), "owner-a")); err != nil {
						t.Errorf("Reserve(new-%d) = %v", i, err)
					}
				}
			})
			for _, r := range burst {
				want = append(want, r.Record)
			}
			slices.SortFunc(want, listOrder)

			const limit = 7
			var got []idempay.Record
			after := idempay.Cursor{}
			for page := 1; ; page++ {
				if page > len(want)/limit+3 {
					t.Fatalf("paging had not ended after %d pages of %d for %d open records", page-1, limit, len(want))
				}
				recs := list(t, s, "ns", after, limit)
				if len(recs) > limit {
					t.Fatalf("page %d has %d records; want at most %d", page, len(recs), limit)
				}
				for _, r := range recs {
					if !past(after, r) {
						t.Fatalf("page %d returned %q at %s, not after its cursor (%s, %q)", page, r.ID, fmtTime(r.CreatedAt), fmtTime(after.CreatedAt), after.ID)
					}
				}
				got = append(got, recs...)
				if len(recs) < limit {
					break
				}
				after = idempay.CursorOf(recs[len(recs)-1])
			}
			if g, w := ids(got), ids(want); !slices.Equal(g, w) {
				missing, seen := []string{}, map[string]int{}
				for _, id := range g {
					seen[id]++
				}
				for _, id := range w {
					if seen[id] == 0 {
						missing = append(missing, id)
					}
				}
				t.Errorf("paging returned %d records; want the %d open ones in order. Missing %d: %q; first records %q, want %q",
					len(g), len(w), len(missing), missing[:min(len(missing), 5)], g[:min(len(g), 10)], w[:min(len(w), 10)])
			}
		},
	}, {
		name: "ListOpen/the cursor is a place, not a record",
		rule: "A Cursor is an instant and an intent ID, in any time zone: ListOpen goes on after it even when the record it was taken from has since closed or begun a new attempt (which moves that record to its new CreatedAt, later in the order)",
		run: func(t *testing.T, s idempay.KeyStore) {
			var recs []idempay.Record
			for i := 1; i <= 6; i++ {
				recs = append(recs, reserve(t, s, request(fmt.Sprintf("p-%d", i), "owner-a")).Record)
			}
			first := list(t, s, "ns", idempay.Cursor{}, 2)
			checkList(t, s, "the first page", first, recs[:2])
			if len(first) != 2 {
				t.FailNow()
			}
			apply(t, s, "p-1", recs[0], resolution(recs[0], idempay.StateSucceeded))
			p2 := apply(t, s, "p-2", recs[1], resolution(recs[1], idempay.StateFailed))
			r := nextAttempt("p-2", 2, "owner-b")
			p2 = begun(p2, r, reserve(t, s, r).Now)

			jst := time.FixedZone("JST", 9*60*60)
			after := idempay.CursorOf(first[1])
			after.CreatedAt = after.CreatedAt.In(jst)
			checkList(t, s, "the page after p-2's old place, its cursor in JST", list(t, s, "ns", after, 2), recs[2:4])
			checkList(t, s, "the rest", list(t, s, "ns", idempay.CursorOf(recs[3]), 10), append(slices.Clone(recs[4:]), p2))
		},
	}, {
		name: "ListOpen/intent IDs at one CreatedAt are ordered bytewise",
		rule: "ListOpen's ties on CreatedAt are broken by intent ID compared bytewise (\"B\" < \"a\", \"order-10\" < \"order-9\", ASCII before any non-ASCII), not by a locale's collation: from a Cursor (CreatedAt of a record, some ID), the record is returned exactly when its ID is bytewise after the cursor's, and every later record always",
		run: func(t *testing.T, s idempay.KeyStore) {
			idsByLocale := []string{"a", "B", "order-9", "order-10", "e", "é", "z", "Z", "ä", "ß", "Ω", "a-1", "A-1", "order-1"}
			var recs []idempay.Record
			for _, id := range idsByLocale {
				recs = append(recs, reserve(t, s, request(id, "owner-a")).Record)
			}
			slices.SortFunc(recs, listOrder)
			probes := append(slices.Clone(idsByLocale), "", "order-", "\u00ff", "zz")
			jst := time.FixedZone("JST", 9*60*60)
			for i, r := range recs {
				for j, x := range probes {
					after := idempay.Cursor{CreatedAt: r.CreatedAt, ID: x}
					if j%2 == 1 {
						after.CreatedAt = after.CreatedAt.In(jst)
					}
					var want []idempay.Record
					for _, q := range recs {
						if past(after, q) {
							want = append(want, q)
						}
					}
					got := list(t, s, "ns", after, 100)
					if g, w := ids(got), ids(want); !slices.Equal(g, w) {
						t.Errorf("ListOpen after (CreatedAt of %q, %q) returned %q; want %q", r.ID, x, g, w)
					}
				}
				if t.Failed() && i > 2 {
					return // enough examples
				}
			}
		},
	}, {
		name: "ListOpen/unknown namespace returns nothing",
		rule: "ListOpen of a namespace without records returns no records and no error, even when its name is a prefix of, or differs only in case from, one that has records",
		run: func(t *testing.T, s idempay.KeyStore) {
			listFixture(t, s)
			for _, ns := range []string{"n", "NS", "ns ", "nsx"} {
				if got, err := s.ListOpen(t.Context(), ns, idempay.Cursor{}, 100); err != nil || len(got) != 0 {
					t.Errorf(`ListOpen(%q) = %d records, %v; want none and no error`, ns, len(got), err)
				}
			}
		},
	}}
}
