package redis

import (
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
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
		for _, other := range k.list() {
			if hashTag(other) != tag {
				t.Errorf("namespace %q: keys %v do not share one hash tag", ns, k.list())
			}
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
		"sub-ms durable wait": WithDurableWait(time.Microsecond),
	}
	for name, opt := range bad {
		if _, err := New(fakeClient(), opt); err == nil {
			t.Errorf("%s: New = nil error; want the option refused", name)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) = nil error; want an error")
	}
	// go-redis gives up on a pipeline's reply after ReadTimeout (5s by
	// default) and sends it again: a wait as long would repeat the write.
	if _, err := New(fakeClient(), WithDurableWait(5*time.Second)); err == nil {
		t.Error("New with a durable wait as long as ReadTimeout = nil error; want it refused")
	}
	s, err := New(goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ReadTimeout: 600 * time.Millisecond}))
	if err != nil || s.wait != 400*time.Millisecond {
		t.Errorf("default durable wait under a 600ms ReadTimeout = %v, %v; want 400ms", s.wait, err)
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
		if len(s) != 19 || s <= prev {
			t.Errorf("encodeTime(%v) = %q; want 19 digits, after %q", tm, s, prev)
		}
		// Read back at the microsecond, the indexes' precision.
		back, err := decodeTime(s)
		if want := tm.Truncate(time.Microsecond); err != nil || !back.Equal(want) {
			t.Errorf("decodeTime(%q) = %v, %v; want %v", s, back, err, want)
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
