package twoc2p_test

import (
	"testing"

	"github.com/idempay/idempay/internal/conformance"
	"github.com/idempay/idempay/provider/twoc2p"
)

// Mistakes that would fail on the first send are refused by New, naming
// the field, before anything is stored or sent.
func TestNewRefusesTwoC2PMisconfiguration(t *testing.T) {
	conformance.TestConfig(t, twoc2p.Provider{MerchantID: tc2pMerchant}, append(conformance.ConfigChecks(tc2pSecret),
		conformance.ConfigCase{Name: "no merchant ID", Credentials: tc2pSecret, Provider: twoc2p.Provider{},
			Field: "Provider.MerchantID"},
		conformance.ConfigCase{Name: "base URL with /payment/4.3", Path: "/payment/4.3", Credentials: tc2pSecret, Field: "BaseURL"},
		conformance.ConfigCase{Name: "base URL with the token path", Path: "/payment/4.3/paymentToken",
			Credentials: tc2pSecret, Field: "BaseURL"},
		conformance.ConfigCase{Name: "a maintenance URL without a host", Credentials: tc2pSecret,
			Provider: twoc2p.Provider{MerchantID: tc2pMerchant, MaintenanceURL: "/PaymentAction/2.0/action"},
			Field:    "Provider.MaintenanceURL"},
		conformance.ConfigCase{Name: "manual settlement without the keys", Credentials: tc2pSecret,
			Provider: twoc2p.Provider{MerchantID: tc2pMerchant, ManualSettlement: true}, Field: "Provider.Maintenance"},
	))
}
