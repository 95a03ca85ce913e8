package twoc2ptest

import (
	"crypto/rsa"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Paths served, as 2C2P serves them: PGW v4.3's Payment Token and Payment
// Inquiry, and the Payment Maintenance (Payment Action 2.0) endpoint of
// refunds, settlements and voids.
const (
	TokenPath       = "/payment/4.3/paymentToken"
	InquiryPath     = "/payment/4.3/paymentInquiry"
	MaintenancePath = "/PaymentAction/2.0/action"
)

// DefaultWebPaymentBase prefixes the paymentToken in webPaymentUrl.
const DefaultWebPaymentBase = "https://fake2c2p.invalid/payment/4.3/#/token/"

// The merchant a Server knows without WithMerchant: 2C2P's demo merchant
// ID and a test secret.
const (
	DefaultMerchantID = "JT01"
	DefaultSecret     = "twoc2ptest-merchant-secret-key"
)

// Endpoint names the APIs the server serves.
type Endpoint string

// The endpoints.
const (
	Token       Endpoint = "token"       // POST TokenPath
	Inquiry     Endpoint = "inquiry"     // POST InquiryPath
	Maintenance Endpoint = "maintenance" // POST MaintenancePath
)

// Option configures a Server. Options check their input; NewServer panics
// on a bad one, as a fixture built wrong should stop the test at once.
type Option func(*config) error

// config is what the options set.
type config struct {
	faults.Settings
	merchantID, secret string
	rates              map[Endpoint]fakes.Rates
	plainErrors        bool
	noEcho             bool
	webPaymentBase     string
	manualSettlement   bool
	pendingRefunds     bool
	maintenanceKeys    bool
	merchantKey        *rsa.PublicKey
	gatewayKey         *rsa.PrivateKey
	hook               func(RequestInfo)
}

// RequestInfo describes a request whose payload verified, as it arrives,
// before any fault is drawn or anything is done.
type RequestInfo struct {
	Endpoint      Endpoint // which API
	MerchantID    string   // the payload's
	InvoiceNo     string   // the payload's
	IdempotencyID string   // token requests, and maintenance requests that carry one
	// Claims is a token or inquiry request's verified payload, numbers as
	// json.Number; ProcessType and Action a maintenance request's.
	Claims      map[string]any
	ProcessType string                 // a maintenance request's
	Action      *PaymentProcessRequest // a maintenance request's XML
	// Request is the incoming request; its body has been read.
	Request *http.Request
}

// WithMerchant sets the one merchant the server knows (requests naming
// another get plain respCode 9007) and its secret key, which signs
// requests and answers of Payment Token and Payment Inquiry. It is refused
// if either is empty.
func WithMerchant(merchantID, secret string) Option {
	return func(c *config) error {
		if merchantID == "" || secret == "" {
			return errors.New("merchant ID and secret are required")
		}
		c.merchantID, c.secret = merchantID, secret
		return nil
	}
}

// WithFaultRates injects random faults at rates r into Payment Token
// requests, drawn from sources seeded with seed (one per endpoint): the
// same seed and the same order of requests give the same run. It is
// refused, with fakes.ErrBadRates, for bad rates.
func WithFaultRates(r fakes.Rates, seed uint64) Option {
	return func(c *config) error {
		if err := c.SetFaults(fakes.Rates{}, seed); err != nil {
			return err
		}
		return c.setRates(Token, r)
	}
}

// WithEndpointFaultRates injects random faults at rates r into the
// requests of endpoint e (Token, Inquiry or Maintenance), from that
// endpoint's seeded source. It is refused for bad rates or an unknown
// endpoint.
func WithEndpointFaultRates(e Endpoint, r fakes.Rates) Option {
	return func(c *config) error { return c.setRates(e, r) }
}

func (c *config) setRates(e Endpoint, r fakes.Rates) error {
	if e != Token && e != Inquiry && e != Maintenance {
		return errors.New("unknown endpoint " + string(e))
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if c.rates == nil {
		c.rates = map[Endpoint]fakes.Rates{}
	}
	c.rates[e] = r
	return nil
}

// WithSettings sets what every fake is configured with: the clock (JWT
// expiry, transaction times, a maintenance key's lease), Retry-After (none
// by default), how connections drop and close, leniency (see
// fakes.Settings; Lenient carries out the refunds, settlements and voids
// 2C2P refuses). Zero fields keep the defaults or what an earlier
// WithSettings set. It is refused, with fakes.ErrBadSettings, for a
// negative duration.
func WithSettings(s fakes.Settings) Option { return func(c *config) error { return c.SetSettings(s) } }

// WithPlainErrors answers every refusal of Payment Token and Payment
// Inquiry in the plain {"respCode", "respDesc"} form instead of a signed
// JWT.
func WithPlainErrors() Option { return func(c *config) error { c.plainErrors = true; return nil } }

// WithoutIdempotencyEcho leaves idempotencyID out of inquiry answers
// (2C2P's documentation does not say whether it echoes it).
func WithoutIdempotencyEcho() Option { return func(c *config) error { c.noEcho = true; return nil } }

// WithWebPaymentBase sets what prefixes the paymentToken to make
// webPaymentUrl (default DefaultWebPaymentBase). It is refused if empty.
func WithWebPaymentBase(base string) Option {
	return func(c *config) error {
		if strings.TrimSpace(base) == "" {
			return errors.New("web payment base is empty")
		}
		c.webPaymentBase = base
		return nil
	}
}

// WithManualSettlement makes a paid transaction an authorisation, approved
// but not settled, until a maintenance request settles it (processType S,
// in part or whole) or voids it (V). Without it a payment is settled when
// made, so it can be refunded at once.
func WithManualSettlement() Option {
	return func(c *config) error { c.manualSettlement = true; return nil }
}

// WithPendingRefunds answers every new refund with status RP (refund
// pending) until CompleteRefund settles it. A pending refund counts against
// what is left to refund; a failed one frees its amount.
func WithPendingRefunds() Option {
	return func(c *config) error { c.pendingRefunds = true; return nil }
}

// WithMaintenanceKeys makes the server de-duplicate maintenance requests
// by their idempotencyID element: the same request again gets the stored
// answer, another processType under the key respCode 50, the key while
// its first request runs respCode 51. Without it the element is recorded
// and echoed but de-duplicates nothing, as an adapter must assume (2C2P's
// documentation names result codes 50 and 51 but not the element).
func WithMaintenanceKeys() Option {
	return func(c *config) error { c.maintenanceKeys = true; return nil }
}

// WithMerchantKey sets the merchant's public key: maintenance requests must
// be signed (PS256) with its private key, and answers are encrypted to it.
// Without it the server makes a key pair of its own on first use, whose
// private half MerchantKey returns. It is refused if pub is nil.
func WithMerchantKey(pub *rsa.PublicKey) Option {
	return func(c *config) error {
		if pub == nil {
			return errors.New("merchant key is nil")
		}
		c.merchantKey = pub
		return nil
	}
}

// WithGatewayKey sets 2C2P's own key pair: the server decrypts maintenance
// requests with it and signs its answers. Without it the server makes one
// on first use, which costs about a tenth of a second of CPU: a test that
// starts many servers makes one pair and passes it to each. It is refused
// if priv is nil.
func WithGatewayKey(priv *rsa.PrivateKey) Option {
	return func(c *config) error {
		if priv == nil {
			return errors.New("gateway key is nil")
		}
		c.gatewayKey = priv
		return nil
	}
}

// WithHook calls hook for every request whose payload verified, before any
// fault is drawn or anything is done, on the handler's goroutine. It is
// refused if hook is nil.
func WithHook(hook func(RequestInfo)) Option {
	return func(c *config) error { return faults.SetHook(&c.hook, hook) }
}

// WithTest ties the server to t: when t ends the server is closed (its
// handlers finish, so the books are final) and t fails if CheckMoney or
// CheckInvoices finds something wrong. It is refused if t is nil.
func WithTest(t testing.TB) Option { return func(c *config) error { return c.SetTest(t) } }
