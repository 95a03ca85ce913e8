package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// t0 is the suite's reference instant. It has a microsecond part, so that a
// store rounding to milliseconds or seconds is caught, and it lies years in
// the future, so that a store's own retention sweep (which works from the
// wall clock) never deletes what a case has just written.
var t0 = time.Date(2031, time.March, 14, 15, 9, 26, 535897000, time.UTC)

// leaseFor is the lease length the cases ask for; its value matters only in
// that the cases reason about instants before and after t0+leaseFor.
const leaseFor = 30 * time.Second

// us is the precision the suite requires stores to keep.
const us = time.Microsecond

// newRecord builds an open record reserved at `at` by owner, leased for
// leaseFor, with a fingerprint derived from the key so that a record
// returned with the wrong key also shows the wrong fingerprint.
func newRecord(ns, id, key, owner string, at time.Time) idempay.Record {
	return idempay.Record{
		Namespace:   ns,
		IntentID:    id,
		Key:         key,
		Fingerprint: "fp-" + key,
		State:       idempay.StateOpen,
		CreatedAt:   at,
		UpdatedAt:   at,
		LeaseOwner:  owner,
		LeaseUntil:  at.Add(leaseFor),
	}
}

// reserve calls s.Reserve and stops the case on error: every later check
// depends on the record being there.
func reserve(t *testing.T, s idempay.KeyStore, r idempay.Record) idempay.Reservation {
	t.Helper()
	got, err := s.Reserve(t.Context(), r)
	if err != nil {
		t.Fatalf("Reserve(%q, %q, key %q) = %v; want no error", r.Namespace, r.IntentID, r.Key, err)
	}
	return got
}

// resolve calls s.Resolve and stops the case on error.
func resolve(t *testing.T, s idempay.KeyStore, res idempay.Resolution) {
	t.Helper()
	if err := s.Resolve(t.Context(), res); err != nil {
		t.Fatalf("Resolve(%q, %q, key %q, state %q) = %v; want no error",
			res.Namespace, res.IntentID, res.Key, res.State, err)
	}
}

// load calls s.Load and stops the case on error.
func load(t *testing.T, s idempay.KeyStore, ns, id string) idempay.Record {
	t.Helper()
	r, err := s.Load(t.Context(), ns, id)
	if err != nil {
		t.Fatalf("Load(%q, %q) = %v; want the record", ns, id, err)
	}
	return r
}

// resolution builds the Resolution that moves the record r to state at `at`.
func resolution(r idempay.Record, state idempay.State, at time.Time) idempay.Resolution {
	return idempay.Resolution{
		Namespace: r.Namespace,
		IntentID:  r.IntentID,
		Key:       r.Key,
		State:     state,
		At:        at,
	}
}

// sameTime reports whether a and b are the same instant at the precision
// stores must keep. Zero stays zero: truncating the zero time is a no-op.
func sameTime(a, b time.Time) bool {
	return a.Truncate(us).Equal(b.Truncate(us))
}

// diffRecord lists the fields in which got differs from want, one line
// each, so that a failure names every wrong field at once.
func diffRecord(got, want idempay.Record) []string {
	var d []string
	str := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	tm := func(name string, g, w time.Time) {
		if !sameTime(g, w) {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, fmtTime(g), fmtTime(w)))
		}
	}
	str("Namespace", got.Namespace, want.Namespace)
	str("IntentID", got.IntentID, want.IntentID)
	str("Key", got.Key, want.Key)
	str("Fingerprint", got.Fingerprint, want.Fingerprint)
	str("State", string(got.State), string(want.State))
	tm("CreatedAt", got.CreatedAt, want.CreatedAt)
	tm("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	str("LeaseOwner", got.LeaseOwner, want.LeaseOwner)
	tm("LeaseUntil", got.LeaseUntil, want.LeaseUntil)
	str("ProviderRef", got.ProviderRef, want.ProviderRef)
	if !bytes.Equal(got.Result, want.Result) {
		d = append(d, fmt.Sprintf("Result = %q, want %q", got.Result, want.Result))
	}
	return d
}

// fmtTime prints the zero time recognisably, since a store that turns "no
// lease" into the Unix epoch is a common mistake.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// checkRecord reports every field of got that differs from want; what says
// which record was read and why want is expected.
func checkRecord(t *testing.T, what string, got, want idempay.Record) {
	t.Helper()
	if d := diffRecord(got, want); len(d) > 0 {
		t.Errorf("%s:\n\t%s", what, strings.Join(d, "\n\t"))
	}
}

// checkStored loads the record of want and checks it against want.
func checkStored(t *testing.T, s idempay.KeyStore, what string, want idempay.Record) {
	t.Helper()
	checkRecord(t, what+" (as read back by Load)", load(t, s, want.Namespace, want.IntentID), want)
}
