package idempay

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Field limits of the PGW v4.3 Payment Token request (2C2P's types AN25,
// C250, C100). The user-defined fields' limit is not in the public
// documentation; 150 is what 2C2P's samples stay within.
const (
	twoc2pMaxMerchantID    = 25
	twoc2pMaxDescription   = 250
	twoc2pMaxIdempotencyID = 100
	twoc2pMaxUserDefined   = 150
	twoc2pMaxURL           = 1000
)

// TwoC2PPaymentToken is the payload of a PGW v4.3 Payment Token request
// (POST /payment/4.3/paymentToken). It is a plain value: build it, then
// Validate, JSON, Sign or Body it. Nothing in it is generated: the invoice
// number comes from the caller's persisted intent (see TwoC2PInvoiceNo),
// and the amount from integer minor units.
type TwoC2PPaymentToken struct {
	// MerchantID is the 2C2P merchant ID: 1 to 25 letters and digits.
	MerchantID string
	// InvoiceNo identifies the payment at 2C2P and is its idempotency key
	// in practice: 2C2P refuses a second token request for it with
	// respCode 9015. 1 to 50 letters and digits; 20 with a QR channel.
	InvoiceNo string
	// Description is shown to the customer: 1 to 250 characters.
	Description string
	// Amount in minor units of Currency (JPY 1500 is ¥1,500; THB 123456 is
	// ฿1,234.56). It is sent as the decimal major-unit number 2C2P expects.
	Amount int64
	// Currency is the ISO 4217 alphabetic code ("THB", "JPY"), any case.
	Currency string
	// PaymentChannel lists the channels offered, e.g. ["CC"]. Required.
	PaymentChannel []string
	// IdempotencyID is optional (at most 100 characters); the TwoC2P
	// adapter puts the intent's idempotency key in it.
	IdempotencyID string
	// Request3DS is "Y", "N", "F" (force) or empty for 2C2P's default.
	Request3DS string
	// FrontendReturnURL and BackendReturnURL are optional absolute http(s)
	// URLs: where the customer returns, and where 2C2P notifies the
	// merchant's server.
	FrontendReturnURL string
	BackendReturnURL  string
	// UserDefined holds userDefined1 to userDefined5, returned by 2C2P in
	// its answers and notifications. Empty entries are not sent.
	UserDefined [5]string
}

// twoc2pTokenWire is the payload as it goes on the wire. The amount is a
// json.Number so it is written as the exact decimal literal, never through
// a float64.
type twoc2pTokenWire struct {
	MerchantID        string      `json:"merchantID"`
	InvoiceNo         string      `json:"invoiceNo"`
	Description       string      `json:"description"`
	Amount            json.Number `json:"amount"`
	CurrencyCode      string      `json:"currencyCode"`
	PaymentChannel    []string    `json:"paymentChannel"`
	IdempotencyID     string      `json:"idempotencyID,omitempty"`
	Request3DS        string      `json:"request3DS,omitempty"`
	FrontendReturnURL string      `json:"frontendReturnUrl,omitempty"`
	BackendReturnURL  string      `json:"backendReturnUrl,omitempty"`
	UserDefined1      string      `json:"userDefined1,omitempty"`
	UserDefined2      string      `json:"userDefined2,omitempty"`
	UserDefined3      string      `json:"userDefined3,omitempty"`
	UserDefined4      string      `json:"userDefined4,omitempty"`
	UserDefined5      string      `json:"userDefined5,omitempty"`
}

// Validate checks p against 2C2P's field rules and returns a
// *ValidationError (matching ErrInvalidRequest) for the first fault. It is
// what JSON, Sign and Body run before encoding anything.
func (p TwoC2PPaymentToken) Validate() error {
	_, err := p.wire()
	return err
}

func (p TwoC2PPaymentToken) wire() (*twoc2pTokenWire, error) {
	if err := twoc2pCheckMerchantID(p.MerchantID); err != nil {
		return nil, err
	}
	if len(p.PaymentChannel) == 0 {
		return nil, invalid("PaymentChannel", "is empty; name at least one channel, e.g. CC")
	}
	for _, c := range p.PaymentChannel {
		if !isASCIIAlnum(c) {
			return nil, invalid("PaymentChannel", "%q is not a channel code", c)
		}
	}
	if err := TwoC2PCheckInvoiceNo(p.InvoiceNo, TwoC2PHasQRChannel(p.PaymentChannel)); err != nil {
		return nil, err
	}
	if err := twoc2pCheckText("Description", p.Description, twoc2pMaxDescription, true); err != nil {
		return nil, err
	}
	if p.Amount <= 0 {
		return nil, invalid("Amount", "must be positive, got %d", p.Amount)
	}
	amount, err := TwoC2PAmount(p.Amount, p.Currency)
	if err != nil {
		return nil, err
	}
	if p.IdempotencyID != "" {
		if len(p.IdempotencyID) > twoc2pMaxIdempotencyID {
			return nil, invalid("IdempotencyID", "is %d characters, more than 2C2P's %d", len(p.IdempotencyID), twoc2pMaxIdempotencyID)
		}
		if ValidateKey(p.IdempotencyID) != nil {
			return nil, invalid("IdempotencyID", "must be printable ASCII without spaces")
		}
	}
	switch p.Request3DS {
	case "", "Y", "N", "F":
	default:
		return nil, invalid("Request3DS", "%q must be Y, N, F or empty", p.Request3DS)
	}
	for _, u := range []struct{ field, v string }{{"FrontendReturnURL", p.FrontendReturnURL}, {"BackendReturnURL", p.BackendReturnURL}} {
		if err := twoc2pCheckURL(u.field, u.v); err != nil {
			return nil, err
		}
	}
	for i, v := range p.UserDefined {
		if err := twoc2pCheckText(fmt.Sprintf("UserDefined%d", i+1), v, twoc2pMaxUserDefined, false); err != nil {
			return nil, err
		}
	}
	return &twoc2pTokenWire{
		MerchantID: p.MerchantID, InvoiceNo: p.InvoiceNo, Description: p.Description,
		Amount: json.Number(amount), CurrencyCode: strings.ToUpper(p.Currency),
		PaymentChannel: p.PaymentChannel, IdempotencyID: p.IdempotencyID, Request3DS: p.Request3DS,
		FrontendReturnURL: p.FrontendReturnURL, BackendReturnURL: p.BackendReturnURL,
		UserDefined1: p.UserDefined[0], UserDefined2: p.UserDefined[1], UserDefined3: p.UserDefined[2],
		UserDefined4: p.UserDefined[3], UserDefined5: p.UserDefined[4],
	}, nil
}

// JSON validates p and returns the claims object that Sign signs: compact,
// fields in the order of 2C2P's documentation, empty optional fields left
// out, amount as a decimal number literal ("amount":1234.56).
func (p TwoC2PPaymentToken) JSON() ([]byte, error) {
	w, err := p.wire()
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// Sign validates p and returns it as a JWT signed with HS256 under the
// merchant secret key. Invalid input is refused before anything is signed.
func (p TwoC2PPaymentToken) Sign(secret Secret) (string, error) {
	claims, err := p.JSON()
	if err != nil {
		return "", err
	}
	return TwoC2PSigner{Secret: secret}.Sign(claims)
}

// Body returns the request body 2C2P expects: {"payload": "<jwt>"}.
func (p TwoC2PPaymentToken) Body(secret Secret) ([]byte, error) {
	tok, err := p.Sign(secret)
	if err != nil {
		return nil, err
	}
	return twoc2pBody(tok), nil
}

// TwoC2PInquiry is the payload of a PGW v4.3 Payment Inquiry request (POST
// /payment/4.3/paymentInquiry): which invoice of which merchant to look up.
type TwoC2PInquiry struct {
	MerchantID string `json:"merchantID"`
	InvoiceNo  string `json:"invoiceNo"`
	// Locale of respDesc, e.g. "en"; optional.
	Locale string `json:"locale,omitempty"`
}

// Body validates q and returns the signed request body {"payload": "<jwt>"}.
// The invoice number is checked against the longer, non-QR limit, since an
// inquiry does not say which channel was used.
func (q TwoC2PInquiry) Body(secret Secret) ([]byte, error) {
	if err := twoc2pCheckMerchantID(q.MerchantID); err != nil {
		return nil, err
	}
	if err := TwoC2PCheckInvoiceNo(q.InvoiceNo, false); err != nil {
		return nil, err
	}
	if q.Locale != "" && (len(q.Locale) > 10 || !isASCIIAlnum(strings.ReplaceAll(q.Locale, "-", ""))) {
		return nil, invalid("Locale", "%q is not a locale", q.Locale)
	}
	claims, _ := json.Marshal(q) // strings only: cannot fail
	tok, err := TwoC2PSigner{Secret: secret}.Sign(claims)
	if err != nil {
		return nil, err
	}
	return twoc2pBody(tok), nil
}

func twoc2pCheckMerchantID(id string) error {
	switch {
	case id == "":
		return invalid("MerchantID", "is empty")
	case len(id) > twoc2pMaxMerchantID || !isASCIIAlnum(id):
		return invalid("MerchantID", "%q must be 1 to %d letters and digits", id, twoc2pMaxMerchantID)
	}
	return nil
}

func twoc2pCheckText(field, s string, max int, required bool) error {
	switch {
	case s == "" && required:
		return invalid(field, "is empty")
	case !utf8.ValidString(s) || hasControl(s):
		return invalid(field, "has control characters or invalid UTF-8")
	case utf8.RuneCountInString(s) > max:
		return invalid(field, "is %d characters, more than %d", utf8.RuneCountInString(s), max)
	}
	return nil
}

func twoc2pCheckURL(field, s string) error {
	if s == "" {
		return nil
	}
	// The URL is not quoted back in errors: it may carry credentials.
	u, err := url.Parse(s)
	switch {
	case len(s) > twoc2pMaxURL:
		return invalid(field, "is longer than %d bytes", twoc2pMaxURL)
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return invalid(field, "is not an absolute http(s) URL")
	case u.User != nil:
		return invalid(field, "must not carry credentials")
	}
	return nil
}
