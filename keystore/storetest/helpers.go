package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// us is the precision the suite requires stores to keep.
const us = time.Microsecond

// Lease lengths the cases ask for. longLease outlasts any case, so that a
// lease taken with it is held throughout; shortLease runs out after a short
// sleep.
const (
	longLease  = time.Minute
	shortLease = 30 * time.Millisecond
)

// request is the first attempt of intent id in namespace "ns" as owner
// asks for it, with a long lease. The key is the owner's own (every flight
// makes a key before it knows whether the intent has one), the fingerprint
// the intent's (every flight of an order sends its parameters), so that a
// claim is possible and a record returned with the wrong key shows it.
func request(id, owner string) idempay.ReserveRequest {
	return idempay.ReserveRequest{
		Namespace:   "ns",
		ID:          id,
		Attempt:     1,
		Key:         "key-" + id + "-" + owner,
		Fingerprint: "fp-" + id,
		Owner:       owner,
		Lease:       longLease,
	}
}

// withLease returns r asking for lease d.
func withLease(r idempay.ReserveRequest, d time.Duration) idempay.ReserveRequest {
	r.Lease = d
	return r
}

// span is the stretch of the caller's clock during which a call ran. The
// store's clock read during the call must lie in it, give or take
// ClockSlack.
type span struct{ start, end time.Time }

// timed runs f and returns the span it ran in.
func timed(f func()) span {
	start := time.Now()
	f()
	return span{start, time.Now()}
}

// holds reports whether the store instant x may have been read during w.
func (w span) holds(x time.Time) bool {
	return !x.Before(w.start.Add(-ClockSlack)) && !x.After(w.end.Add(ClockSlack))
}

func (w span) String() string {
	return fmt.Sprintf("[%s, %s] ± %s", fmtTime(w.start), fmtTime(w.end), ClockSlack)
}

// checkWithin reports an error unless the stamp x, named by what, lies in w.
func checkWithin(t *testing.T, what string, x time.Time, w span) {
	t.Helper()
	if !w.holds(x) {
		t.Errorf("%s = %s; want the store's clock during the call, within %s", what, fmtTime(x), w)
	}
}

// sleepPast sleeps until the instant x of the store's clock has passed on
// the caller's clock too, with ClockSlack to spare.
func sleepPast(x time.Time) {
	time.Sleep(time.Until(x.Add(ClockSlack + time.Millisecond)))
}

// reserved is a Reservation and the span of the Reserve that returned it.
type reserved struct {
	idempay.Reservation
	span span
}

// reserve calls s.Reserve and stops the case on error: every later check
// depends on the answer. It checks that Now is the store's clock during the
// call. Only for the test's goroutine; racing goroutines call s.Reserve.
func reserve(t *testing.T, s idempay.KeyStore, r idempay.ReserveRequest) reserved {
	t.Helper()
	var got idempay.Reservation
	var err error
	w := timed(func() { got, err = s.Reserve(t.Context(), r) })
	if err != nil {
		t.Fatalf("Reserve(%q, %q, attempt %d, owner %q) = %v; want no error", r.Namespace, r.ID, r.Attempt, r.Owner, err)
	}
	checkWithin(t, fmt.Sprintf("Reserve(%q, %q).Now", r.Namespace, r.ID), got.Now, w)
	return reserved{got, w}
}

// checkReply checks the flags of a Reservation; what names the call.
func checkReply(t *testing.T, what string, got reserved, created, claimed bool) {
	t.Helper()
	if got.Created != created || got.Claimed != claimed {
		t.Errorf("%s: Created=%v Claimed=%v; want Created=%v Claimed=%v", what, got.Created, got.Claimed, created, claimed)
	}
}

// resolve calls s.Resolve, stops the case on error, and returns the span of
// the call.
func resolve(t *testing.T, s idempay.KeyStore, res idempay.Resolution) span {
	t.Helper()
	var err error
	w := timed(func() { err = s.Resolve(t.Context(), res) })
	if err != nil {
		t.Fatalf("Resolve(%q, %q, key %q, state %q, owner %q) = %v; want no error",
			res.Namespace, res.ID, res.Key, res.State, res.LeaseOwner, err)
	}
	return w
}

// apply resolves rec with res and checks what the store then holds: rec as
// the contract says res changes it, with UpdatedAt (and ClosedAt, when
// closing) stamped by the store during the call. It returns that record.
func apply(t *testing.T, s idempay.KeyStore, what string, rec idempay.Record, res idempay.Resolution) idempay.Record {
	t.Helper()
	w := resolve(t, s, res)
	got := load(t, s, rec.Namespace, rec.ID)
	checkWithin(t, what+": UpdatedAt", got.UpdatedAt, w)
	want := resolved(rec, res, got.UpdatedAt)
	checkRecord(t, what+" (as read back by Load)", got, want)
	return want
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

// resolution is the Resolution that moves r to state, naming no lease
// owner.
func resolution(r idempay.Record, state idempay.State) idempay.Resolution {
	return idempay.Resolution{Namespace: r.Namespace, ID: r.ID, Key: r.Key, State: state}
}

// release is the Resolution by which owner gives r's lease back.
func release(r idempay.Record, owner string) idempay.Resolution {
	res := resolution(r, idempay.StateOpen)
	res.LeaseOwner = owner
	return res
}

// The contract, as functions from a record and a call to the record after
// it. now is the store's clock at the call.

// inserted is the record Reserve inserts for r when the intent has none.
func inserted(r idempay.ReserveRequest, now time.Time) idempay.Record {
	return idempay.Record{
		Namespace:   r.Namespace,
		ID:          r.ID,
		Attempt:     r.Attempt,
		Key:         r.Key,
		Fingerprint: r.Fingerprint,
		State:       idempay.StateOpen,
		CreatedAt:   now,
		UpdatedAt:   now,
		Creator:     r.Owner,
		LeaseOwner:  r.Owner,
		LeaseUntil:  now.Add(r.Lease),
	}
}

// claimed is rec after r took its lease.
func claimed(rec idempay.Record, r idempay.ReserveRequest, now time.Time) idempay.Record {
	rec.LeaseOwner = r.Owner
	rec.LeaseUntil = now.Add(r.Lease)
	rec.UpdatedAt = now
	return rec
}

// begun is the failed rec after r began a new attempt over it.
func begun(rec idempay.Record, r idempay.ReserveRequest, now time.Time) idempay.Record {
	next := inserted(r, now)
	next.History = append(slices.Clone(rec.History), rec.Past())
	return next
}

// resolved is rec after res was applied to it: the state (unless res only
// releases the lease), ProviderRef and Result when given, UpdatedAt and, on
// closing, ClosedAt from the store's clock, and no lease.
func resolved(rec idempay.Record, res idempay.Resolution, now time.Time) idempay.Record {
	if res.State != idempay.StateOpen {
		rec.State = res.State
	}
	if rec.State.Closed() {
		rec.ClosedAt = now
	}
	if res.ProviderRef != "" {
		rec.ProviderRef = res.ProviderRef
	}
	if res.Result != nil {
		rec.Result = res.Result
	}
	rec.UpdatedAt = now
	rec.LeaseOwner = ""
	rec.LeaseUntil = time.Time{}
	return rec
}

// sameTime reports whether a and b are the same instant at the precision
// stores must keep. Zero stays zero: truncating the zero time is a no-op.
func sameTime(a, b time.Time) bool {
	return a.Truncate(us).Equal(b.Truncate(us))
}

// fmtTime prints the zero time recognisably, since a store that turns "no
// time" into the Unix epoch is a common mistake.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// differ collects the fields in which a got value differs from a wanted
// one, one line each, so that a failure names every wrong field at once.
type differ []string

func (d *differ) str(name, g, w string) {
	if g != w {
		*d = append(*d, fmt.Sprintf("%s = %q, want %q", name, g, w))
	}
}

func (d *differ) num(name string, g, w int) {
	if g != w {
		*d = append(*d, fmt.Sprintf("%s = %d, want %d", name, g, w))
	}
}

func (d *differ) tm(name string, g, w time.Time) {
	if !sameTime(g, w) {
		*d = append(*d, fmt.Sprintf("%s = %s, want %s", name, fmtTime(g), fmtTime(w)))
	}
}

// bytes compares with bytes.Equal: a store may return an empty Result as
// nil or as an empty slice.
func (d *differ) bytes(name string, g, w []byte) {
	if !bytes.Equal(g, w) {
		*d = append(*d, fmt.Sprintf("%s = %q, want %q", name, g, w))
	}
}

// diffRecord lists the fields in which got differs from want.
func diffRecord(got, want idempay.Record) []string {
	var d differ
	d.str("Namespace", got.Namespace, want.Namespace)
	d.str("IntentID", got.ID, want.ID)
	d.num("Attempt", got.Attempt, want.Attempt)
	d.str("Key", got.Key, want.Key)
	d.str("Fingerprint", got.Fingerprint, want.Fingerprint)
	d.str("State", string(got.State), string(want.State))
	d.tm("CreatedAt", got.CreatedAt, want.CreatedAt)
	d.tm("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	d.tm("ClosedAt", got.ClosedAt, want.ClosedAt)
	d.str("Creator", got.Creator, want.Creator)
	d.str("LeaseOwner", got.LeaseOwner, want.LeaseOwner)
	d.tm("LeaseUntil", got.LeaseUntil, want.LeaseUntil)
	d.str("ProviderRef", got.ProviderRef, want.ProviderRef)
	d.bytes("Result", got.Result, want.Result)
	d.num("len(History)", len(got.History), len(want.History))
	for i := range min(len(got.History), len(want.History)) {
		g, w := got.History[i], want.History[i]
		p := fmt.Sprintf("History[%d].", i)
		d.num(p+"Attempt", g.Attempt, w.Attempt)
		d.str(p+"Key", g.Key, w.Key)
		d.str(p+"Fingerprint", g.Fingerprint, w.Fingerprint)
		d.str(p+"State", string(g.State), string(w.State))
		d.tm(p+"CreatedAt", g.CreatedAt, w.CreatedAt)
		d.tm(p+"ClosedAt", g.ClosedAt, w.ClosedAt)
		d.str(p+"ProviderRef", g.ProviderRef, w.ProviderRef)
		d.bytes(p+"Result", g.Result, w.Result)
	}
	return d
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
	checkRecord(t, what+" (as read back by Load)", load(t, s, want.Namespace, want.ID), want)
}

// allBytes is a Result no text encoding survives: every byte value, then
// sequences that are invalid UTF-8 (a lone continuation byte, a truncated
// sequence, an overlong NUL, a surrogate).
func allBytes() []byte {
	b := make([]byte, 0, 256+10)
	for i := range 256 {
		b = append(b, byte(i))
	}
	return append(b, 0x80, 0xe2, 0x82, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xff, 0x00)
}
