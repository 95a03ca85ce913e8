package filestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func TestRecordRoundTrip(t *testing.T) {
	jst := time.FixedZone("JST", 9*3600)
	full := idempay.Record{
		Namespace: "stripe:acct_1", ID: "order-1", Attempt: 3, Key: "key", Fingerprint: "fp",
		State:      idempay.StateSucceeded,
		CreatedAt:  time.Date(2030, 1, 2, 3, 4, 5, 123456789, jst),
		UpdatedAt:  time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), // negative Unix time
		ClosedAt:   time.Date(2030, 1, 3, 0, 0, 0, 1000, time.UTC),
		Creator:    "host/0",
		LeaseOwner: "host/1", LeaseUntil: time.Date(2262, 4, 12, 0, 0, 0, 1, time.UTC),
		ProviderRef: "pi_1", Result: []byte{0, 0xff, 0xfe},
		History: []idempay.PastAttempt{
			{Attempt: 1, Key: "k1", Fingerprint: "f1", State: idempay.StateFailed, CreatedAt: time.Unix(1, 0),
				ClosedAt: time.Unix(2, 0), ProviderRef: "ch_1", Result: []byte{}},
			{Attempt: 2, Key: "k2", State: idempay.StateFailed, CreatedAt: time.Unix(3, 0), ClosedAt: time.Unix(4, 0)},
		},
	}
	for _, r := range []idempay.Record{
		full,
		{Attempt: 1, State: idempay.StateOpen}, // zero times, nil Result
		{Namespace: "n", ID: "i", Attempt: 1, State: idempay.StateFailed, ClosedAt: time.Unix(5, 0), Result: []byte{}},
		{Namespace: "n", ID: "i", Attempt: 1 << 20, State: idempay.StatePending, Key: string(make([]byte, 300))}, // 2-byte length
	} {
		got, err := decodeRecord(r.Namespace, r.ID, encodeRecord(r))
		if err != nil {
			t.Fatalf("decode(encode(%+v)) = %v", r, err)
		}
		if !sameRecord(got, r) {
			t.Errorf("round trip changed the record:\n got %+v\nwant %+v", got, r)
		}
	}
}

// sameRecord compares records field by field, times as instants and byte
// slices with nil apart from empty.
func sameRecord(a, b idempay.Record) bool {
	if len(a.History) != len(b.History) {
		return false
	}
	for i := range a.History {
		p, q := a.History[i], b.History[i]
		if p.Attempt != q.Attempt || p.Key != q.Key || p.Fingerprint != q.Fingerprint || p.State != q.State ||
			!sameTime(p.CreatedAt, q.CreatedAt) || !sameTime(p.ClosedAt, q.ClosedAt) || p.ProviderRef != q.ProviderRef || !sameBytes(p.Result, q.Result) {
			return false
		}
	}
	return a.Namespace == b.Namespace && a.ID == b.ID && a.Attempt == b.Attempt && a.Key == b.Key &&
		a.Fingerprint == b.Fingerprint && a.State == b.State && sameTime(a.CreatedAt, b.CreatedAt) &&
		sameTime(a.UpdatedAt, b.UpdatedAt) && sameTime(a.ClosedAt, b.ClosedAt) && a.Creator == b.Creator &&
		a.LeaseOwner == b.LeaseOwner && sameTime(a.LeaseUntil, b.LeaseUntil) && a.ProviderRef == b.ProviderRef &&
		sameBytes(a.Result, b.Result)
}

func sameTime(a, b time.Time) bool { return a.Equal(b) && a.IsZero() == b.IsZero() }

func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// encodeFormat1 is the record layout of file format 1 (commit 6d33e90),
// kept here to test that decodeRecord still reads it:
//
//	format byte (1), state byte, Key, Fingerprint, CreatedAt, UpdatedAt,
//	LeaseOwner, LeaseUntil, ProviderRef, Result
func encodeFormat1(r idempay.Record) []byte {
	b := []byte{recordFormat1, stateCodes[r.State]}
	b = appendString(b, r.Key)
	b = appendString(b, r.Fingerprint)
	b = appendTime(b, r.CreatedAt)
	b = appendTime(b, r.UpdatedAt)
	b = appendString(b, r.LeaseOwner)
	b = appendTime(b, r.LeaseUntil)
	b = appendString(b, r.ProviderRef)
	return appendBytes(b, r.Result)
}

func TestDecodeFormat1(t *testing.T) {
	created, updated := time.Unix(1000, 5).UTC(), time.Unix(2000, 7).UTC()
	old := idempay.Record{Namespace: "n", ID: "i", Key: "k", Fingerprint: "f", State: idempay.StateSucceeded,
		CreatedAt: created, UpdatedAt: updated, LeaseOwner: "o", LeaseUntil: updated, ProviderRef: "p", Result: []byte("r")}
	got, err := decodeRecord("n", "i", encodeFormat1(old))
	want := old
	want.Attempt, want.ClosedAt = 1, updated
	if err != nil || !sameRecord(got, want) {
		t.Errorf("decode of format 1 = %+v, %v\nwant %+v", got, err, want)
	}
	old.State = idempay.StatePending
	if got, err := decodeRecord("n", "i", encodeFormat1(old)); err != nil || !got.ClosedAt.IsZero() || got.Attempt != 1 {
		t.Errorf("decode of a pending format 1 record = %+v, %v; want attempt 1, not closed", got, err)
	}
	old.State, old.CreatedAt, old.UpdatedAt = idempay.StateFailed, time.Time{}, time.Time{}
	if got, err := decodeRecord("n", "i", encodeFormat1(old)); err != nil || !got.ClosedAt.Equal(time.Unix(0, 0)) {
		t.Errorf("decode of a format 1 record closed with no times = %+v, %v; want closed at the epoch", got, err)
	}
}

// TestDecodeRejectsDamage cuts and alters encoded records: every variant
// must decode to ErrCorrupt, never panic.
func TestDecodeRejectsDamage(t *testing.T) {
	v2 := encodeRecord(idempay.Record{Attempt: 2, Key: "k", State: idempay.StateFailed, CreatedAt: time.Unix(1, 0),
		ClosedAt: time.Unix(2, 0), Result: []byte("r"), History: []idempay.PastAttempt{{Attempt: 1, State: idempay.StateFailed}}})
	v1 := encodeFormat1(idempay.Record{Key: "k", State: idempay.StateOpen, CreatedAt: time.Unix(1, 0), Result: []byte("r")})
	for _, v := range [][]byte{v1, v2} {
		for i := range len(v) {
			if _, err := decodeRecord("n", "i", v[:i]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("decode of the first %d of %d bytes = %v; want ErrCorrupt", i, len(v), err)
			}
		}
		if _, err := decodeRecord("n", "i", append(slices.Clone(v), 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode with a trailing byte = %v; want ErrCorrupt", err)
		}
	}
	for _, b := range []struct {
		at  int
		val byte
	}{{0, 3}, {0, 0}, {1, 0}, {1, 9}, {1, 1}, {2, 0}} { // unknown formats and states, open with ClosedAt, attempt 0
		w := slices.Clone(v2)
		w[b.at] = b.val
		if _, err := decodeRecord("n", "i", w); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode with byte %d set to %d = %v; want ErrCorrupt", b.at, b.val, err)
		}
	}
	for _, n := range []uint64{1000, 1 << 40} {
		huge := encodeRecord(idempay.Record{Attempt: 1, State: idempay.StateOpen})
		huge = binary.AppendUvarint(huge[:len(huge)-1], n)
		if _, err := decodeRecord("n", "i", huge); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode with a history of %d attempts in no bytes = %v; want ErrCorrupt", n, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(idempay.Record{Attempt: 1, Key: "k", State: idempay.StatePending, CreatedAt: time.Unix(1, 2), Result: []byte("x")}))
	f.Add(encodeRecord(idempay.Record{Attempt: 2, State: idempay.StateFailed, ClosedAt: time.Unix(1, 2),
		History: []idempay.PastAttempt{{Attempt: 1, Key: "a", Result: []byte{}}}}))
	f.Add(encodeFormat1(idempay.Record{Key: "k", State: idempay.StateSucceeded, UpdatedAt: time.Unix(3, 0)}))
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := decodeRecord("n", "i", v)
		if err != nil {
			return
		}
		// Whatever decodes must encode back to a record that decodes
		// equal: no information is invented or lost.
		again, err := decodeRecord("n", "i", encodeRecord(r))
		if err != nil || !sameRecord(again, r) {
			t.Errorf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

func TestKeysOrder(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(-1, 999999999),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Unix(1, 0),
		time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := 1; i < len(times); i++ {
		a, b := timeKey(nil, times[i-1]), timeKey(nil, times[i])
		if bytes.Compare(a, b) >= 0 || len(a) != timeKeyLen {
			t.Errorf("timeKey(%v) = %x does not sort before timeKey(%v) = %x", times[i-1], a, times[i], b)
		}
	}
	for _, p := range [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"", "x"}, {"x", ""}} {
		ns, id, err := splitRecordKey(recordKey(p[0], p[1]))
		if err != nil || ns != p[0] || id != p[1] {
			t.Errorf("splitRecordKey(recordKey(%q, %q)) = %q, %q, %v", p[0], p[1], ns, id, err)
		}
		ns, id, err = splitOpenKey(openKey(p[0], time.Unix(9, 9), p[1]))
		if err != nil || ns != p[0] || id != p[1] {
			t.Errorf("splitOpenKey(openKey(%q, %q)) = %q, %q, %v", p[0], p[1], ns, id, err)
		}
	}
	if bytes.HasPrefix(recordKey("ab", "c"), nsPrefix("a")) {
		t.Error(`the records of namespace "ab" fall under the prefix of namespace "a"`)
	}
	// The open index sorts as ListOpen's order: CreatedAt, then the
	// intent ID bytewise, a shorter ID first.
	keys := [][]byte{openKey("n", time.Unix(5, 0), "b"), openKey("n", time.Unix(5, 0), "ba"),
		openKey("n", time.Unix(5, 0), "c"), openKey("n", time.Unix(5, 1), "a")}
	if !slices.IsSortedFunc(keys, bytes.Compare) {
		t.Errorf("open index keys out of (CreatedAt, IntentID) order: %x", keys)
	}
	if _, _, err := splitOpenKey(nsPrefix("n")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("splitOpenKey of a key with no time = %v; want ErrCorrupt", err)
	}
}
