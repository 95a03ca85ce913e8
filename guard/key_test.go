package guard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay/guard"
)

// Rule: a guarded method without a usable Idempotency-Key is answered 400
// with a problem+json body naming the draft, before the store is asked or
// the handler runs.
func TestMissingAndMalformedKeysAre400(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		code   string
	}{
		{"missing", nil, guard.CodeKeyMissing},
		{"empty", []string{""}, guard.CodeKeyMissing},
		{"blank", []string{"  "}, guard.CodeKeyMissing},
		{"twice", []string{testKey, testKey}, guard.CodeKeyMalformed},
		{"too short", []string{"abc"}, guard.CodeKeyMalformed},
		{"too long", []string{strings.Repeat("k", 256)}, guard.CodeKeyMalformed},
		{"inner space", []string{"8e03978e 40d5-43e8-bc93-6894a57f9324"}, guard.CodeKeyMalformed},
		{"list", []string{testKey + ", " + testKey}, guard.CodeKeyMalformed},
		{"not ASCII", []string{"8e03978e-40d5-43e8-bc93-6894a57f93é"}, guard.CodeKeyMalformed},
		{"unterminated", []string{`"` + testKey}, guard.CodeKeyMalformed},
		{"bad escape", []string{`"8e03978e-40d5-\n43e8-bc93-6894a57f9324"`}, guard.CodeKeyMalformed},
		{"escaped quote", []string{`"8e03978e-40d5-\"43e8-bc93-6894a57f9324"`}, guard.CodeKeyMalformed},
		{"parameters", []string{`"` + testKey + `";v=1`}, guard.CodeKeyMalformed},
		{"control", []string{"\"8e03978e-40d5-43e8-bc93\x01-6894a57f9324\""}, guard.CodeKeyMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &countingStore{KeyStore: newMem()}
			c := &counter{}
			r := newRequest(http.MethodPost, "/checkout", "acme", "", "{}")
			for _, v := range tc.values {
				r.Header.Add(guard.HeaderKey, v)
			}
			w := serve(newGuard(t, s).Wrap(c), r)
			if w.Code != http.StatusBadRequest || c.runs.Load() != 0 || s.trips() != 0 {
				t.Fatalf("%d %s, runs %d: want 400 and nothing run or stored", w.Code, w.Body, c.runs.Load())
			}
			if code := problemCode(t, w); code != tc.code {
				t.Fatalf("code %q, want %q", code, tc.code)
			}
			if !strings.Contains(w.Body.String(), guard.DraftURL) || !strings.Contains(w.Body.String(), "draft-ietf-httpapi-idempotency-key-header") {
				t.Fatalf("the problem does not name the draft: %s", w.Body)
			}
			if strings.Contains(w.Body.String(), "8e03978e") {
				t.Fatalf("the problem quotes the key: %s", w.Body)
			}
		})
	}
}

// Rule: the draft's structured-field String ("...") and the bare token
// are one key: a client that switches form between retries gets the
// replay. Surrounding spaces are not part of the key.
func TestStructuredFieldAndBareFormAreOneKey(t *testing.T) {
	c := &counter{}
	h := newGuard(t, newMem()).Wrap(c)
	forms := []string{`"` + testKey + `"`, testKey, "  " + testKey + "\t", ` "` + testKey + `" `}
	for i, v := range forms {
		r := post("x")
		r.Header.Set(guard.HeaderKey, v)
		w := serve(h, r)
		if w.Code != http.StatusCreated || (i > 0) != (w.Header().Get(guard.HeaderReplayed) == "true") {
			t.Fatalf("form %q: %d replayed=%q", v, w.Code, w.Header().Get(guard.HeaderReplayed))
		}
	}
	if c.runs.Load() != 1 {
		t.Fatalf("handler ran %d times for one key in %d forms", c.runs.Load(), len(forms))
	}
}

// Rule: WithKeyLength moves the limits.
func TestKeyLengthLimits(t *testing.T) {
	h := newGuard(t, newMem(), guard.WithKeyLength(4, 8)).Wrap(&counter{})
	for key, want := range map[string]int{"abc": 400, "abcd": 201, "abcdefgh": 201, "abcdefghi": 400, `"abcde"`: 201} {
		r := newRequest(http.MethodPost, "/checkout", "acme", key, "")
		if w := serve(h, r); w.Code != want {
			t.Errorf("key %q: %d, want %d", key, w.Code, want)
		}
	}
}
