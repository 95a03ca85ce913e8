package omise_test

import (
	"testing"

	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/provider/omise"
)

// Mistakes that would fail on the first send are refused by New, naming
// the field, before anything is stored or sent.
func TestNewRefusesOmiseMisconfiguration(t *testing.T) {
	conformance.TestConfig(t, omise.Provider{}, append(conformance.ConfigChecks(secret),
		conformance.ConfigCase{Name: "padded credentials", Credentials: secret + "\n", Field: "Credentials"},
		conformance.ConfigCase{Name: "the public key", Credentials: "pkey_test_123", Field: "Credentials"},
		conformance.ConfigCase{Name: "base URL with /charges", Path: "/charges", Credentials: secret, Field: "BaseURL"},
	))
}
