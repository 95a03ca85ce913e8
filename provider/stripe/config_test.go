package stripe_test

import (
	"testing"

	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/provider/stripe"
)

// Mistakes that would fail on the first send are refused by New, naming
// the field, before anything is stored or sent; the configurations that
// work are not.
func TestNewRefusesStripeMisconfiguration(t *testing.T) {
	conformance.TestConfig(t, stripe.Provider{}, append(conformance.ConfigChecks(secret),
		conformance.ConfigCase{Name: "a publishable key", Credentials: "pk_test_123", Field: "Credentials"},
		conformance.ConfigCase{Name: "base URL ending in /v1", Path: "/v1", Credentials: secret, Field: "BaseURL"},
		conformance.ConfigCase{Name: "base URL ending in /v1/", Path: "/v1/", Credentials: secret, Field: "BaseURL"},
		conformance.ConfigCase{Name: "base URL with the endpoint", Path: "/v1/payment_intents", Credentials: secret, Field: "BaseURL"},
		conformance.ConfigCase{Name: "API version with a space", Credentials: secret,
			Provider: stripe.Provider{APIVersion: "2024 06"}, Field: "Provider.APIVersion"},
		conformance.ConfigCase{Name: "a restricted key", Credentials: "rk_test_restricted"},
	))
}
