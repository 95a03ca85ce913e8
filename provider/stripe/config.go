package stripe

import (
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

var _ idempay.ConfigChecker = Provider{}

// CheckConfig refuses, when idempay.New is called, what would fail on
// every request: Credentials empty, padded, or not a secret (sk_) or
// restricted (rk_) key (a publishable pk_ key cannot create
// PaymentIntents); a BaseURL with a query, or ending in /v1 or one of the
// adapter's endpoints, which it appends itself (https://api.stripe.com/v1
// would send /v1/v1/payment_intents); an APIVersion that is not one header
// value; a Connect setting that could mix accounts' records (see
// Provider.Account). A path before them (a proxy's prefix) is kept.
func (p Provider) CheckConfig(t idempay.Target) error {
	if err := wire.CheckCredentials(t.Credentials, "a Stripe secret key (sk_...) or restricted key (rk_...)", "sk_", "rk_"); err != nil {
		return err
	}
	if err := wire.CheckBase(t, "https://api.stripe.com", paymentIntentsPath, refundsPath); err != nil {
		return err
	}
	if p.APIVersion != "" && !wire.Printable(p.APIVersion) {
		return wire.BadConfig("Provider.APIVersion", "must be printable ASCII without spaces")
	}
	return p.checkConnect(t)
}
