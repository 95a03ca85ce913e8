package idempay

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRedactFieldsFindsEveryForm: a secret member is taken out whatever the
// case of its name, however deep, and when its name is written with JSON
// escapes; an answer naming none is kept byte for byte, unparsed.
func TestRedactFieldsFindsEveryForm(t *testing.T) {
	names := []string{"client_secret"}
	for _, doc := range []string{
		`{"client_secret":"pi_1_secret_X"}`,
		`{"Client_Secret":"pi_1_secret_X"}`,
		`{"a":[{"b":{"client_secret":"pi_1_secret_X"}}]}`,
		`{"client\u005fsecret":"pi_1_secret_X"}`,
	} {
		got := string(redactFields([]byte(doc), names))
		if strings.Contains(got, "secret_X") {
			t.Errorf("redactFields(%s) = %s; the secret is still there", doc, got)
		}
	}
	plain := `{"id":"ch_1",  "amount":1500}`
	if got := string(redactFields([]byte(plain), names)); got != plain {
		t.Errorf("redactFields(%s) = %s; want it unchanged", plain, got)
	}
	if got := redactFields([]byte(`{"client_secret":`), names); got != nil {
		t.Errorf("an unreadable document with a secret name is dropped, got %s", got)
	}
}

// TestRedactBytesEveryForm: a secret is taken out of a body as sent and as
// JSON escapes it (quotes, <>&, control and non-ASCII characters), and a
// body holding none comes back as it was.
func TestRedactBytesEveryForm(t *testing.T) {
	for _, sec := range []Secret{"tokn_plain", `tok"n\1`, "tok<n>&", "tokn\u2028é", "tok\x01n"} {
		esc, _ := json.Marshal(sec.Reveal())
		for _, form := range []string{sec.Reveal(), string(esc[1 : len(esc)-1])} {
			body := []byte(`{"message":"No such token: ` + form + `"}`)
			if got := string(redactBytes(body, "", sec)); strings.Contains(got, form) {
				t.Errorf("redactBytes(%s) = %s; the secret %q is still there", body, got, sec.Reveal())
			}
		}
	}
	plain := []byte(`{"id":"ch_1"}`)
	if got := redactBytes(plain, "tokn_x"); string(got) != string(plain) {
		t.Errorf("redactBytes changed a body without secrets: %s", got)
	}
}

// TestMentionsAnyNonASCII: a body with non-ASCII bytes is always parsed,
// since Unicode case folding could make a member match a secret name.
func TestMentionsAnyNonASCII(t *testing.T) {
	if !mentionsAny([]byte(`{"\u212a":"x","é":1}`), []string{"client_secret"}) {
		t.Error("a body with non-ASCII bytes must be parsed")
	}
	if mentionsAny([]byte(`{"id":"ch_1","client":"x"}`), []string{"client_secret"}) {
		t.Error("a body naming no secret member need not be parsed")
	}
	if !mentionsAny([]byte(`{"CLIENT_Secret":"x"}`), []string{"client_secret"}) {
		t.Error("names match in any ASCII case")
	}
}
