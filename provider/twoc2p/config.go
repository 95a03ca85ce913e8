package twoc2p

import (
	"cmp"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

var _ idempay.ConfigChecker = Provider{}

// CheckConfig refuses, when idempay.New is called, what would fail on
// every request: no merchant secret key (Credentials) or MerchantID; a
// BaseURL with a query or fragment, or ending in a part of the paths the
// adapter appends itself (/payment/4.3, /payment/4.3/paymentToken, and
// /PaymentAction/2.0/action while MaintenanceURL is empty); a
// MaintenanceURL that is not absolute; Maintenance keys set but unusable;
// ManualSettlement without them. Charges alone need no Maintenance keys.
func (p Provider) CheckConfig(t idempay.Target) error {
	if err := wire.CheckCredentials(t.Credentials, "the merchant's 2C2P secret key"); err != nil {
		return err
	}
	if p.MerchantID == "" {
		return wire.BadConfig("Provider.MerchantID", "is empty; set the 2C2P merchant ID")
	}
	own := []string{cmp.Or(p.TokenPath, TokenPath), cmp.Or(p.InquiryPath, InquiryPath)}
	if p.MaintenanceURL == "" {
		own = append(own, MaintenancePath)
	} else if err := checkMaintenanceURL(p.MaintenanceURL); err != nil {
		return wire.BadConfig("Provider.MaintenanceURL", "%v", err)
	}
	if err := wire.CheckBase(t, "https://sandbox-pgw.2c2p.com", own...); err != nil {
		return err
	}
	keysSet := p.Maintenance.Merchant != nil || p.Maintenance.Gateway != nil
	if keysSet || p.ManualSettlement {
		if err := p.Maintenance.Check(); err != nil {
			return wire.BadConfig("Provider.Maintenance", "%v", err)
		}
	}
	return nil
}
