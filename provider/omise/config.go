package omise

import (
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

var _ idempay.ConfigChecker = Provider{}

// CheckConfig refuses, when idempay.New is called, what would fail on
// every request: Credentials empty, padded, or not a secret key (skey_; the
// public pkey_ key only makes tokens), and a BaseURL with a query or
// fragment, or ending in /charges, which the adapter appends itself. A path
// before it (a proxy's prefix) is kept.
func (p Provider) CheckConfig(t idempay.Target) error {
	if err := wire.CheckCredentials(t.Credentials, "an Omise secret key (skey_...)", "skey_"); err != nil {
		return err
	}
	return wire.CheckBase(t, "https://api.omise.co", chargesPath)
}
