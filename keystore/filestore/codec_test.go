package filestore

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

func TestRecordRoundTrip(t *testing.T) {
	jst := time.FixedZone("JST", 9*3600)
	full := idempay.Record{
		Namespace: "stripe:acct_1", IntentID: "order-1", Key: "key", Fingerprint: "fp",
		State:      idempay.StatePending,
		CreatedAt:  time.Date(2030, 1, 2, 3, 4, 5, 123456789, jst),
		UpdatedAt:  time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), // negative Unix time
		LeaseOwner: "host/1", LeaseUntil: time.Date(2262, 4, 12, 0, 0, 0, 1, time.UTC),
		ProviderRef: "pi_1", Result: []byte{0, 0xff, 0xfe},
	}
	for _, r := range []idempay.Record{
		full,
		{Namespace: "", IntentID: "", State: idempay.StateOpen},                                        // zero times, nil Result
		{Namespace: "n", IntentID: "i", State: idempay.StateFailed, Result: []byte{}},                  // empty, non-nil Result
		{Namespace: "n", IntentID: "i", State: idempay.StateSucceeded, Key: string(make([]byte, 300))}, // 2-byte length
	} {
		got, err := decodeRecord(r.Namespace, r.IntentID, encodeRecord(r))
		if err != nil {
			t.Fatalf("decode(encode(%+v)) = %v", r, err)
		}
		same := got.Key == r.Key && got.Fingerprint == r.Fingerprint && got.State == r.State &&
			got.CreatedAt.Equal(r.CreatedAt) && got.UpdatedAt.Equal(r.UpdatedAt) && got.LeaseUntil.Equal(r.LeaseUntil) &&
			got.CreatedAt.IsZero() == r.CreatedAt.IsZero() && got.LeaseOwner == r.LeaseOwner &&
			got.ProviderRef == r.ProviderRef && bytes.Equal(got.Result, r.Result) && (got.Result == nil) == (r.Result == nil)
		if !same {
			t.Errorf("round trip changed the record:\n got %+v\nwant %+v", got, r)
		}
	}
}

// TestDecodeRejectsDamage cuts and alters an encoded record: every variant
// must decode to ErrCorrupt or to a valid record, never panic.
func TestDecodeRejectsDamage(t *testing.T) {
	v := encodeRecord(idempay.Record{Key: "k", State: idempay.StateOpen, CreatedAt: time.Unix(1, 0), Result: []byte("r")})
	for i := range len(v) {
		if _, err := decodeRecord("n", "i", v[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode of the first %d of %d bytes = %v; want ErrCorrupt", i, len(v), err)
		}
	}
	if _, err := decodeRecord("n", "i", append(slices.Clone(v), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("decode with a trailing byte = %v; want ErrCorrupt", err)
	}
	for _, b := range []struct {
		at  int
		val byte
	}{{0, 2}, {1, 0}, {1, 9}} { // unknown format, unknown states
		w := slices.Clone(v)
		w[b.at] = b.val
		if _, err := decodeRecord("n", "i", w); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode with byte %d set to %d = %v; want ErrCorrupt", b.at, b.val, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(idempay.Record{Key: "k", State: idempay.StatePending, CreatedAt: time.Unix(1, 2), Result: []byte("x")}))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := decodeRecord("n", "i", v)
		if err != nil {
			return
		}
		// Whatever decodes must encode back to a record that decodes
		// equal: no information is invented or lost.
		again, err := decodeRecord("n", "i", encodeRecord(r))
		if err != nil || again.Key != r.Key || again.State != r.State || !again.CreatedAt.Equal(r.CreatedAt) || !bytes.Equal(again.Result, r.Result) {
			t.Errorf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

func TestKeysOrder(t *testing.T) {
	times := []time.Time{
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
	}
	if bytes.HasPrefix(recordKey("ab", "c"), nsPrefix("a")) {
		t.Error(`the records of namespace "ab" fall under the prefix of namespace "a"`)
	}
}
