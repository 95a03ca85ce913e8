package wire

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/idempay/idempay"
)

// CheckBase refuses a base URL ending, at a segment boundary, with a
// leading part of a path the adapter appends, and one with a query or
// fragment; it keeps any other prefix.
func TestCheckBase(t *testing.T) {
	own := []string{"/v1/payment_intents", "/v1/refunds"}
	for raw, bad := range map[string]bool{
		"https://api.example": false, "https://api.example/": false, "https://proxy.example/stripe": false,
		"https://api.example/xv1": false, "https://api.example/v10": false, "https://api.example/payment_intents": false,
		"https://api.example/v1": true, "https://api.example/v1/": true, "https://proxy.example/stripe/v1": true,
		"https://api.example/v1/refunds": true, "https://api.example/?a=1": true, "https://api.example/#f": true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckBase(idempay.Target{BaseURL: u}, "https://api.example", own...)
		if (err != nil) != bad {
			t.Errorf("%s: %v, want refused %v", raw, err, bad)
		}
		if err != nil && !errors.Is(err, idempay.ErrConfig) {
			t.Errorf("%s: %v does not match ErrConfig", raw, err)
		}
	}
}

// CheckCredentials never puts the key in its error.
func TestCheckCredentialsKeepsTheKeyOut(t *testing.T) {
	for _, key := range []idempay.Secret{"pk_live_secretpart", " sk_live_secretpart"} {
		err := CheckCredentials(key, "a secret key", "sk_")
		if err == nil || strings.Contains(err.Error(), "secretpart") {
			t.Errorf("%v", err)
		}
	}
	if err := CheckCredentials("sk_live_x", "a secret key", "sk_"); err != nil {
		t.Error(err)
	}
}
