package omise_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/provider/omise"
)

// TestConformance runs the seam's checks of every capability the adapter
// implements (refund, capture, cancel and their lookups) against the fake.
func TestConformance(t *testing.T) {
	srv := omisetest.NewServer(omisetest.WithTest(t), omisetest.WithSecretKey(secret))
	token := func(intent string) idempay.Secret { return idempay.Secret(fmt.Sprintf("tokn_test_cf_%s", intent)) }
	conformance.TestProvider(t, conformance.Subject{
		Provider: omise.Provider{RefundRecheck: time.Millisecond}, BaseURL: srv.URL, Credentials: secret,
		Charge: func(intent string) idempay.ChargeRequest {
			return idempay.ChargeRequest{IntentID: intent, Amount: 150000, Currency: "THB", Source: token(intent)}
		},
		Manual: func(intent string) idempay.ChargeRequest {
			return idempay.ChargeRequest{IntentID: intent, Amount: 150000, Currency: "THB", Source: token(intent),
				Extra: map[string]string{omise.ExtraCapture: "false"}}
		},
		Amount: 150000, Currency: "THB",
	})
}
