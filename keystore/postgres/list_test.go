package postgres

import (
	"slices"
	"strings"
	"testing"

	"github.com/idempay/idempay"
)

// TestListOpenPagesBytewise pages one record at a time through open records
// that share one creation instant and differ only in their intent IDs, in a
// table whose intent_id column has a linguistic collation (ICU English,
// under which "B" sorts after "a"), as a database created with en_US has.
// Every record must come once, in Go's string order; a query comparing or
// sorting by the column's own collation skips or repeats records.
func TestListOpenPagesBytewise(t *testing.T) {
	s := openStore(t)
	var ok bool
	if err := s.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'en-x-icu')`).Scan(&ok); err != nil || !ok {
		t.Skipf("the server has no ICU collation en-x-icu (%v): the test needs a linguistic one", err)
	}
	exec(t, s, `ALTER TABLE {t} ALTER COLUMN intent_id TYPE text COLLATE "en-x-icu"`)
	ids := []string{"a", "B", "b", "A", "_x", "Z", "a-1", "a1", "ä", "z"}
	for _, id := range ids {
		reserve(t, s, request("ns", id))
		reserve(t, s, request("other", id)) // another namespace, never listed
	}
	resolve(t, s, "ns", "z", idempay.StateSucceeded) // settled: never listed
	resolve(t, s, "ns", "Z", idempay.StatePending)   // pending: listed
	exec(t, s, `UPDATE {t} SET created_at = now()`)
	want := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "z" })
	slices.Sort(want) // Go's order: bytewise

	var got []string
	for cur := (idempay.Cursor{}); len(got) <= len(ids); {
		page, err := s.ListOpen(t.Context(), "ns", cur, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if !cur.After(page[0]) {
			t.Errorf("ListOpen after %+v returned %q, which is not after the cursor", cur, page[0].ID)
		}
		got = append(got, page[0].ID)
		cur = idempay.CursorOf(page[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged one at a time: %q\nwant Go's order:     %q", got, want)
	}
	all, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 100)
	if err != nil || len(all) != len(want) {
		t.Fatalf("one page = %d records, %v; want %d", len(all), err, len(want))
	}
	var one []string
	for _, r := range all {
		one = append(one, r.ID)
	}
	if !slices.Equal(one, want) {
		t.Errorf("one page: %q\nwant Go's order: %q", strings.Join(one, " "), strings.Join(want, " "))
	}
}

// TestListOpenOrder checks the order by creation first, and that a limit
// ends a page.
func TestListOpenOrder(t *testing.T) {
	s := openStore(t)
	for _, id := range []string{"c", "a", "b"} {
		reserve(t, s, request("ns", id))
	}
	page, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 2)
	if err != nil || len(page) != 2 || page[0].ID != "c" || page[1].ID != "a" {
		t.Fatalf("first page = %+v, %v; want c, a (creation order)", page, err)
	}
	rest, err := s.ListOpen(t.Context(), "ns", idempay.CursorOf(page[1]), 2)
	if err != nil || len(rest) != 1 || rest[0].ID != "b" {
		t.Errorf("second page = %+v, %v; want b", rest, err)
	}
	if _, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 0); err == nil {
		t.Error("ListOpen with limit 0 = nil error; want it refused")
	}
}
