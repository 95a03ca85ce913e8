package stripe

import (
	"github.com/idempay/idempay"
)

// IntentMetadataKey is the metadata key that tags every PaymentIntent
// with its idempay intent ID, so that it can be found by search. Callers
// may not set it themselves.
const IntentMetadataKey = "idempay_intent"

// Provider speaks Stripe's PaymentIntents API. Its zero value is ready: it
// sends no Stripe-Version header, so Stripe uses the account's default
// API version.
type Provider struct {
	// APIVersion, if set, is sent as the Stripe-Version header of every
	// request, pinning the shape of Stripe's answers. Search needs
	// 2020-08-27 or later.
	APIVersion string
}

var (
	_ idempay.Provider = Provider{}
	_ idempay.Finder   = Provider{}
)

// Name is "stripe": the provider part of every KeyStore namespace.
func (Provider) Name() string { return "stripe" }
