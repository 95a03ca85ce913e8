package twoc2p

import (
	"cmp"
	"slices"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Provider speaks 2C2P's PGW v4.3 for the Client; see the package
// documentation.
type Provider struct {
	// MerchantID is the 2C2P merchant ID. Required.
	MerchantID string
	// PaymentChannel lists the channels offered to the customer. Default
	// ["CC"].
	PaymentChannel []string
	// Request3DS is sent as request3DS when set: "Y", "N" or "F".
	Request3DS string
	// BackendReturnURL is where 2C2P notifies the merchant's server.
	BackendReturnURL string
	// TokenPath and InquiryPath default to TokenPath and InquiryPath under
	// Config.BaseURL (for example https://sandbox-pgw.2c2p.com).
	TokenPath   string
	InquiryPath string
	// IsDecline says which Payment Inquiry respCodes are a definite refusal
	// of the payment. Default IsRefusal. A code it accepts ends the intent
	// as failed: include only codes 2C2P confirms move no money.
	IsDecline func(respCode string) bool
	// Now is the clock for the exp and nbf claims of answers. Default
	// time.Now.
	Now func() time.Time
	// NoLegacyInvoiceNo stops FindCharge from asking, after 2C2P does not
	// know an intent's invoiceNo, about the spelling earlier idempay
	// versions gave it. Set it once no intent charged by such a version
	// can still be open.
	NoLegacyInvoiceNo bool

	// Maintenance holds the RSA keys of Payment Maintenance, which
	// refunds (Client.Refund), settles (Client.Capture) and voids
	// (Client.Cancel). Without them those calls are refused with
	// idempay.ErrNotSupported before anything is stored; charges need
	// none. The keys are never printed, logged or put in an error. See
	// OPERATIONS.md.
	Maintenance MaintenanceKeys
	// MaintenanceURL is the absolute URL of Payment Maintenance. Default:
	// MaintenancePath under Config.BaseURL, as the fake serves it; 2C2P
	// serves it on other hosts than PGW v4.3, for example
	// https://demo2.2c2p.com/2C2PFrontend/PaymentAction/2.0/action
	// (sandbox) and https://t.2c2p.com/PaymentAction/2.0/action.
	MaintenanceURL string
	// ManualSettlement says the merchant account settles card payments
	// only on request (2C2P's pre-authorisation): a paid charge is then
	// an authorisation until Client.Capture settles it or Client.Cancel
	// voids it. FindCharge asks Payment Maintenance how each paid
	// transaction stands (processType I): approved and not settled is
	// answered as an authorisation (Charge.Authorized, so that Charge
	// returns idempay.ErrAuthorized, outcome pending); settled, as a
	// captured charge; anything else, unknown. It needs Maintenance; a
	// charge request is refused without them. Without ManualSettlement
	// (the default) a paid charge is captured, and the charge path sends
	// nothing to Payment Maintenance.
	ManualSettlement bool
}

// The default paths of Provider.
const (
	TokenPath   = "/payment/4.3/paymentToken"
	InquiryPath = "/payment/4.3/paymentInquiry"
)

var (
	_ idempay.Provider             = Provider{}
	_ idempay.LookupBeforeResender = Provider{}
)

// Name is "2c2p": the provider part of every KeyStore namespace.
func (Provider) Name() string { return "2c2p" }

// LookupBeforeResend is true: 2C2P answers a repeated invoiceNo with 9015
// instead of a replay, so only Payment Inquiry can say what an earlier
// attempt did.
func (Provider) LookupBeforeResend() bool { return true }

// extraKeys are the ChargeRequest.Extra keys the adapter understands.
var extraKeys = [5]string{"userDefined1", "userDefined2", "userDefined3", "userDefined4", "userDefined5"}

// Validate refuses, before anything is stored or signed, what a token
// request could not carry: see README.md. It checks the
// invoiceNo of attempt 1, the one it can know; a later attempt whose
// invoiceNo does not fit (idempay.TwoC2PAttemptInvoiceNo) is refused when
// its request is built, before anything is sent.
func (p Provider) Validate(req idempay.ChargeRequest) error {
	switch {
	case req.Source != "":
		return wire.Invalid("Source", "has no place in a 2C2P payment token request; the customer pays on webPaymentUrl")
	case req.Customer != "":
		return wire.Invalid("Customer", "has no place in a 2C2P payment token request")
	case len(req.Metadata) > 0:
		return wire.Invalid("Metadata", "has no place in a 2C2P payment token request; use Extra userDefined1 to userDefined5")
	}
	for k := range req.Extra {
		if !slices.Contains(extraKeys[:], k) {
			return wire.Invalid("Extra", "key %q is not one of userDefined1 to userDefined5", k)
		}
	}
	if p.ManualSettlement {
		if err := p.Maintenance.Check(); err != nil {
			return wire.Invalid("Provider.Maintenance", "ManualSettlement needs the Payment Maintenance keys: %v", err)
		}
	}
	pt, err := p.payload(req, 1, req.Key)
	if err != nil {
		return err
	}
	return pt.Validate()
}

// payload builds the token request of attempt n of req, to carry key.
func (p Provider) payload(req idempay.ChargeRequest, n int, key string) (idempay.TwoC2PPaymentToken, error) {
	invoiceNo, err := p.invoiceNo(req.IntentID, n)
	if err != nil {
		return idempay.TwoC2PPaymentToken{}, err
	}
	pt := idempay.TwoC2PPaymentToken{
		MerchantID:        p.MerchantID,
		InvoiceNo:         invoiceNo,
		Description:       cmp.Or(req.Description, req.IntentID),
		Amount:            req.Amount,
		Currency:          req.Currency,
		PaymentChannel:    p.channels(),
		IdempotencyID:     key,
		Request3DS:        p.Request3DS,
		FrontendReturnURL: req.ReturnURL,
		BackendReturnURL:  p.BackendReturnURL,
	}
	for i, k := range extraKeys {
		pt.UserDefined[i] = req.Extra[k]
	}
	return pt, nil
}

func (p Provider) channels() []string {
	if len(p.PaymentChannel) == 0 {
		return []string{"CC"}
	}
	return p.PaymentChannel
}

// invoiceNo is the invoiceNo of attempt n of the intent. Records written
// before attempts existed have attempt 0: their attempt is the first.
func (p Provider) invoiceNo(intentID string, n int) (string, error) {
	return idempay.TwoC2PAttemptInvoiceNo(intentID, max(n, 1), idempay.TwoC2PHasQRChannel(p.channels()))
}

func (p Provider) signer(t idempay.Target) idempay.TwoC2PSigner {
	return idempay.TwoC2PSigner{Secret: t.Credentials, Now: p.Now}
}
