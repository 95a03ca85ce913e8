package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func expireCases() []testCase {
	return []testCase{{
		name: "Expire/deletes closed records created before the cutoff",
		rule: "Expire deletes the succeeded and failed records of every namespace whose CreatedAt is before the cutoff (strictly), keeps all others, and returns how many it deleted",
		run: func(t *testing.T, s idempay.KeyStore) {
			cutoff := t0.Add(10 * time.Second)
			type rec struct {
				ns, id  string
				created time.Time
				state   idempay.State
				gone    bool
			}
			recs := []rec{
				{"ns", "old-succeeded", t0, idempay.StateSucceeded, true},
				{"ns", "old-failed", t0.Add(time.Second), idempay.StateFailed, true},
				{"other", "old-succeeded", t0, idempay.StateSucceeded, true},
				{"ns", "old-open", t0, idempay.StateOpen, false},
				{"ns", "old-pending", t0, idempay.StatePending, false},
				{"ns", "at-cutoff", cutoff, idempay.StateSucceeded, false},
				{"ns", "new-failed", cutoff.Add(us), idempay.StateFailed, false},
			}
			deleted := 0
			for _, r := range recs {
				reserve(t, s, newRecord(r.ns, r.id, "key-"+r.id, "owner", r.created))
				if r.state != idempay.StateOpen {
					// Resolved long after the cutoff: age counts from
					// CreatedAt, not UpdatedAt.
					resolve(t, s, idempay.Resolution{Namespace: r.ns, IntentID: r.id, Key: "key-" + r.id, State: r.state, At: cutoff.Add(time.Hour)})
				}
				if r.gone {
					deleted++
				}
			}
			n, err := s.Expire(t.Context(), cutoff)
			if err != nil {
				t.Fatalf("Expire = %v; want no error", err)
			}
			if n != deleted {
				t.Errorf("Expire returned %d; want %d, the number of closed records created before the cutoff", n, deleted)
			}
			for _, r := range recs {
				_, err := s.Load(t.Context(), r.ns, r.id)
				switch {
				case r.gone && !errors.Is(err, idempay.ErrNotFound):
					t.Errorf("Load(%q, %q) after Expire = %v; want ErrNotFound: a %s record created before the cutoff", r.ns, r.id, err, r.state)
				case !r.gone && err != nil:
					t.Errorf("Load(%q, %q) after Expire = %v; want the record: a %s record created at %s must be kept",
						r.ns, r.id, err, r.state, fmtTime(r.created))
				}
			}
			if n, err := s.Expire(t.Context(), cutoff); n != 0 || err != nil {
				t.Errorf("second Expire = %d, %v; want 0 and no error", n, err)
			}

			// The intent of an expired record starts afresh.
			again := newRecord("ns", "old-succeeded", "key-new", "owner", cutoff.Add(2*time.Hour))
			if got := reserve(t, s, again); !got.Created || got.Record.Key != "key-new" {
				t.Errorf("Reserve after Expire: Created=%v key %q; want Created with key %q", got.Created, got.Record.Key, "key-new")
			}
		},
	}, {
		name: "Expire/never deletes open or pending records",
		rule: "Expire never deletes an open or pending record, however old: it stands for money that may have moved",
		run: func(t *testing.T, s idempay.KeyStore) {
			ancient := t0.AddDate(-10, 0, 0)
			open := reserve(t, s, newRecord("ns", "open", "key-open", "owner", ancient)).Record
			p := reserve(t, s, newRecord("ns", "pending", "key-pending", "owner", ancient)).Record
			resolve(t, s, resolution(p, idempay.StatePending, ancient.Add(time.Second)))

			n, err := s.Expire(t.Context(), t0.AddDate(100, 0, 0))
			if err != nil || n != 0 {
				t.Errorf("Expire with a cutoff 100 years ahead = %d, %v; want 0 and no error", n, err)
			}
			checkStored(t, s, "an old open record after Expire", open)
			if got, err := s.ListOpen(t.Context(), "ns", 0); err != nil || len(got) != 2 {
				t.Errorf("ListOpen after Expire = %d records, %v; want both old records", len(got), err)
			}
		},
	}}
}
