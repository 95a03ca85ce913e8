package stripe_test

import (
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/provider/stripe"
)

// stripeSubject is the adapter against the Stripe fake: a charge of ¥1,500
// at once, or authorised for a later capture.
func stripeSubject(t *testing.T) conformance.Subject {
	srv := stripetest.NewServer(stripetest.WithTest(t), stripetest.WithAPIKey(secret))
	return conformance.Subject{Provider: stripe.Provider{APIVersion: "2024-06-20"}, BaseURL: srv.URL,
		Credentials: secret, Amount: 1500, Currency: "JPY",
		Charge: func(id string) idempay.ChargeRequest { return order(id, "pm_card_visa") },
		Manual: func(id string) idempay.ChargeRequest {
			r := order(id, "pm_card_visa")
			r.Extra = map[string]string{stripe.ExtraCaptureMethod: "manual"}
			return r
		}}
}

// The adapter passes every rule of each capability it implements:
// refunds, captures and cancels, with their lookups.
func TestConformance(t *testing.T) {
	conformance.TestProvider(t, stripeSubject(t))
}
