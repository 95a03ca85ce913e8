package fake2c2p

import (
	"errors"
	"net/http"
	"time"

	"github.com/idempay/idempay/internal/faults"
)

// Paths served, as 2C2P serves them.
const (
	TokenPath   = "/payment/4.3/paymentToken"
	InquiryPath = "/payment/4.3/paymentInquiry"
)

// DefaultWebPaymentBase prefixes the paymentToken in webPaymentUrl.
const DefaultWebPaymentBase = "https://fake2c2p.invalid/payment/4.3/#/token/"

// Config configures a Server. MerchantID and Secret are required.
type Config struct {
	// MerchantID is the one merchant the server knows; requests naming
	// another get plain respCode 9007.
	MerchantID string
	// Secret is the merchant secret key: requests must be signed with it,
	// and answers are.
	Secret string

	// TokenFaults and InquiryFaults are per-request fault probabilities,
	// drawn from sources seeded with Seed.
	TokenFaults   faults.Rates
	InquiryFaults faults.Rates
	// Seed seeds the fault sources and the generated tokens: the same seed
	// and the same order of requests give the same run.
	Seed uint64
	// RetryAfter, if positive, is sent in whole seconds with injected 503s.
	RetryAfter time.Duration
	// DropWithReset ends dropped connections with a TCP reset (the client
	// sees ECONNRESET) instead of an orderly close (EOF).
	DropWithReset bool

	// PlainErrors answers every refusal in the plain {"respCode",
	// "respDesc"} form instead of a signed JWT.
	PlainErrors bool
	// NoIdempotencyEcho leaves idempotencyID out of inquiry answers (2C2P's
	// documentation does not say whether it echoes it).
	NoIdempotencyEcho bool
	// CloseConnections answers with "Connection: close", so every request
	// uses a fresh connection.
	CloseConnections bool
	// WebPaymentBase prefixes the paymentToken to make webPaymentUrl.
	// Default DefaultWebPaymentBase.
	WebPaymentBase string

	// Now is the server's clock. Default time.Now.
	Now func() time.Time
	// OnRequest, if set, is called for every request whose payload
	// verified, before any fault is drawn or anything is done.
	OnRequest func(RequestInfo)
}

// Endpoint names the two APIs the server serves.
type Endpoint string

// The endpoints.
const (
	Token   Endpoint = "token"
	Inquiry Endpoint = "inquiry"
)

// RequestInfo describes a request as it arrives.
type RequestInfo struct {
	Endpoint      Endpoint
	MerchantID    string
	InvoiceNo     string
	IdempotencyID string // token requests only
	// Claims is the verified payload, numbers as json.Number.
	Claims map[string]any
	// Request is the incoming request; its body has been read.
	Request *http.Request
}

// Validate reports whether c can configure a Server.
func (c Config) Validate() error {
	switch {
	case c.MerchantID == "":
		return errors.New("fake2c2p: MerchantID is required")
	case c.Secret == "":
		return errors.New("fake2c2p: Secret is required")
	case c.RetryAfter < 0:
		return errors.New("fake2c2p: negative RetryAfter")
	}
	if err := c.TokenFaults.Validate(); err != nil {
		return err
	}
	return c.InquiryFaults.Validate()
}

func (c Config) withDefaults() Config {
	if c.WebPaymentBase == "" {
		c.WebPaymentBase = DefaultWebPaymentBase
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
