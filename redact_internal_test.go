package idempay

import (
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
