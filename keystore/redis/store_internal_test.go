package redis

import (
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
)

// hashTag returns the part of key Redis Cluster hashes: between the first
// '{' and the next '}', when that is non-empty; else the whole key.
func hashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return key
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return key
	}
	return key[i+1 : i+1+j]
}

// TestKeysOfOneNamespaceShareASlot checks that a record and its
// namespace's indexes hash alike, which the scripts need in a Cluster,
// including for namespaces that contain braces.
func TestKeysOfOneNamespaceShareASlot(t *testing.T) {
	s, err := New(fakeClient())
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"stripe:acct_1", "", "a}b", "{x}", "omise/acct|2"} {
		k := s.keysOf(ns, "order-1")
		tag := hashTag(k.record)
		if hashTag(k.open) != tag || hashTag(k.closed) != tag {
			t.Errorf("namespace %q: hash tags %q %q %q; want one", ns, tag, hashTag(k.open), hashTag(k.closed))
		}
		if other := s.keysOf(ns+"x", "order-1"); hashTag(other.record) == tag && !strings.Contains(ns, "}") {
			t.Errorf("namespaces %q and %q share the hash tag %q", ns, ns+"x", tag)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := map[string]Option{
		"empty prefix":        WithPrefix(""),
		"prefix with brace":   WithPrefix("app{1}:"),
		"negative TTL":        WithClosedTTL(-time.Second),
		"sub-millisecond TTL": WithClosedTTL(time.Microsecond),
		"zero batch":          WithExpireBatch(0),
	}
	for name, opt := range bad {
		if _, err := New(fakeClient(), opt); err == nil {
			t.Errorf("%s: New = nil error; want the option refused", name)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) = nil error; want an error")
	}
}

// TestTimesOutsideRangeAreRefused checks that Reserve refuses a time it
// cannot store exactly instead of writing a wrong one.
func TestTimesOutsideRangeAreRefused(t *testing.T) {
	c := newClient(t, 0)
	s := openStoreOn(t, c)
	r := record("ns", "old")
	r.CreatedAt = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)
	if _, err := s.Reserve(t.Context(), r); err == nil {
		t.Error("Reserve with CreatedAt in 1969 = nil error; want the time refused")
	}
	if _, err := s.Load(t.Context(), "ns", "old"); !errors.Is(err, idempay.ErrNotFound) {
		t.Errorf("Load after a refused Reserve = %v; want ErrNotFound", err)
	}
}

func TestTimeEncodingOrders(t *testing.T) {
	times := []time.Time{
		time.Unix(0, 1),
		time.Date(2001, 9, 9, 1, 46, 39, 999999999, time.UTC), // last 18-digit instant
		time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC),         // first 19-digit one
		time.Date(2031, 3, 14, 15, 9, 26, 535897000, time.UTC),
	}
	prev := ""
	for _, tm := range times {
		s, err := encodeTime(tm)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != timeWidth || s <= prev {
			t.Errorf("encodeTime(%v) = %q; want %d digits, after %q", tm, s, timeWidth, prev)
		}
		back, err := decodeTime(s)
		if err != nil || !back.Equal(tm) {
			t.Errorf("decodeTime(%q) = %v, %v; want %v", s, back, err, tm)
		}
		prev = s
	}
	if s, _ := encodeTime(time.Time{}); s != "" {
		t.Errorf("encodeTime(zero) = %q; want empty", s)
	}
}

// fakeClient is a client that is never used to send: New only keeps it.
func fakeClient() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
}
