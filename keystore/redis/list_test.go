package redis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// TestListOpenPagesInOrder pages through open and pending records with
// limits of 1, 3 and 100 and checks that every page follows the last in
// (CreatedAt, IntentID) order, including records that share a microsecond
// (written as the old layout could, from clients' clocks), and that
// settled records are left out.
func TestListOpenPagesInOrder(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	var want []string
	for i := range 12 {
		id := fmt.Sprintf("r%02d", i)
		switch {
		case i%4 == 3:
			settle(t, s, "ns", id, idempay.StateFailed)
			continue
		case i%4 == 2:
			r := mustReserve(t, s, request("ns", id, "owner"))
			if err := s.Resolve(t.Context(), idempay.Resolution{Namespace: "ns", ID: id, Key: r.Record.Key,
				State: idempay.StatePending}); err != nil {
				t.Fatal(err)
			}
		default:
			mustReserve(t, s, request("ns", id, "owner"))
		}
		want = append(want, id)
	}
	// Three records in one microsecond, with IDs whose bytewise order is
	// not their insertion order, and one that is a prefix of another.
	tie := serverNow(t, c).Add(time.Hour)
	for _, id := range []string{"t-b", "t-a", "t-ab"} {
		writeOld(t, c, s, oldRecord{id: id, state: "open", created: tie.Add(7 * time.Nanosecond), updated: tie})
		want = append(want, id)
	}
	slices.Sort(want[len(want)-3:])
	for _, limit := range []int{1, 3, 100} {
		if got := listAll(t, s, "ns", limit); !slices.Equal(got, want) {
			t.Errorf("limit %d: paged %v; want %v", limit, got, want)
		}
	}
	if _, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 0); err == nil {
		t.Error("ListOpen with limit 0 = nil error")
	}
}

// TestListOpenCursorBetweenMicroseconds checks a cursor the store did not
// make: an instant with nanoseconds lies after every record of its
// microsecond.
func TestListOpenCursorBetweenMicroseconds(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	a := mustReserve(t, s, request("ns", "a", "owner"))
	time.Sleep(time.Millisecond)
	mustReserve(t, s, request("ns", "b", "owner"))
	got, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{CreatedAt: a.Record.CreatedAt.Add(500 * time.Nanosecond), ID: ""}, 10)
	if err != nil || len(got) != 1 || got[0].ID != "b" {
		t.Errorf("ListOpen after a's microsecond and a half = %v, %v; want [b]", ids(got), err)
	}
}

// TestListOpenSkipsRecordsClosedMeanwhile checks that records settled
// between the index read and the record read do not shorten a page: a
// short page must mean the end, or a caller would stop before the rest.
func TestListOpenSkipsRecordsClosedMeanwhile(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	for i := range 6 {
		mustReserve(t, s, request("ns", fmt.Sprintf("r%d", i), "owner"))
	}
	// The index still lists r1 and r2, but their records are settled, as
	// between ListOpen's two round trips.
	for _, id := range []string{"r1", "r2"} {
		c.HSet(t.Context(), s.keysOf("ns", id).record, fState, "succeeded")
	}
	got, err := s.ListOpen(t.Context(), "ns", idempay.Cursor{}, 3)
	if err != nil || strings.Join(ids(got), ",") != "r0,r3,r4" {
		t.Errorf("ListOpen(3) = %v, %v; want [r0 r3 r4]", ids(got), err)
	}
}

func listAll(t *testing.T, s *Store, ns string, limit int) []string {
	t.Helper()
	var out []string
	var after idempay.Cursor
	for range 100 {
		page, err := s.ListOpen(t.Context(), ns, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ids(page)...)
		if len(page) < limit {
			return out
		}
		after = idempay.CursorOf(page[len(page)-1])
	}
	t.Fatal("ListOpen never reached the end")
	return nil
}

func ids(recs []idempay.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}
