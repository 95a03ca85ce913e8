package refserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultPath         = "/payments/charge"
	DefaultRefundPath   = "/payments/refund"
	DefaultCapturePath  = "/payments/capture"
	DefaultCancelPath   = "/payments/cancel"
	DefaultKeyHeader    = "Idempotency-Key"
	DefaultReplayHeader = "Idempotency-Replayed"
	DefaultMaxKeyLength = 255
	DefaultLease        = faults.DefaultLease     // 2 s, as every fake's
	DefaultRetention    = faults.DefaultRetention // 24 h, as every fake's
)

// Config configures a Server. The zero value serves the article's contract
// with no authentication and no faults.
type Config struct {
	// Path serves charges (POST) and lookups by order (GET).
	// Default DefaultPath.
	Path string
	// RefundPath, CapturePath and CancelPath serve the operations (POST)
	// and their lookups (GET with ?refund_id=, ?capture_id=, ?cancel_id=).
	// Defaults DefaultRefundPath, DefaultCapturePath, DefaultCancelPath.
	RefundPath, CapturePath, CancelPath string
	// Lenient makes the server carry out every refund, capture and cancel
	// that arrives, however much it refunds or whatever the charge's state,
	// as a provider with a bug would; the OpLedger's Check then reports
	// what the client should never have sent. By default the server
	// refuses them with 400, as providers do.
	Lenient bool
	// KeyHeader names the idempotency key header. Default DefaultKeyHeader.
	KeyHeader string
	// ReplayHeader is set to "true" on replayed responses. Default
	// DefaultReplayHeader; use "Idempotent-Replayed" for Stripe's spelling.
	ReplayHeader string
	// MaxKeyLength bounds the key (after unquoting); longer keys get 400.
	// Default DefaultMaxKeyLength.
	MaxKeyLength int

	// Auth maps bearer secrets to merchant IDs. When it is not empty, every
	// request must carry "Authorization: Bearer <secret>" with one of them,
	// or gets 401. See the Merchant field of Charge for how the tenant
	// that scopes keys is formed.
	Auth map[string]string

	// Lease is how long a claim on a key stays valid without completing.
	// A request finding an expired claim takes it over. Default DefaultLease.
	Lease time.Duration
	// Retention is how long a key is remembered after its first claim;
	// after that a request with the key is processed as new (and charges
	// again). Default DefaultRetention.
	Retention time.Duration
	// StoreServerErrors stores a 500 produced while executing under the
	// key and replays it, as Stripe does. When false the key is released
	// on a 500, as the article's API does.
	StoreServerErrors bool

	// Faults are the probabilities of each injected fault per charge
	// request, drawn from a source seeded with Seed.
	Faults FaultRates
	// Seed seeds the fault source: the same seed and the same order of
	// requests give the same faults.
	Seed uint64
	// Latency is slept after a key is claimed and before charging, to
	// widen race windows.
	Latency time.Duration
	// RetryAfter is sent, in whole seconds, with injected 503s.
	RetryAfter time.Duration
	// DropWithReset makes dropped connections end with a TCP reset
	// instead of an orderly close: the client sees ECONNRESET, not EOF.
	DropWithReset bool
	// CloseConnections answers every request with "Connection: close", so
	// each request uses a fresh connection and net/http's Transport never
	// retries a dropped one behind the caller's back.
	CloseConnections bool

	// Now is the clock for leases and retention. Default time.Now.
	Now func() time.Time
	// OnRequest, if set, is called for every charge request, before any
	// fault or processing, on the handler's goroutine: a hook that blocks
	// holds the request.
	OnRequest func(RequestInfo)
	// OnOpRequest is OnRequest for refund, capture and cancel requests.
	OnOpRequest func(OpRequestInfo)
}

// OpRequestInfo describes a refund, capture or cancel request as it
// arrives, before any fault or processing.
type OpRequestInfo struct {
	RequestInfo
	// Op is "refund", "capture" or "cancel"; OpID the body's refund_id,
	// capture_id or cancel_id (empty if the body did not parse).
	Op, OpID string
}

// RequestInfo describes a charge request as it arrives, before any fault
// is injected or any processing is done.
type RequestInfo struct {
	// Request is the incoming request. Its body has been read: use Body.
	Request *http.Request
	// Key is the idempotency key, unquoted; the raw header value if it
	// could not be parsed; empty if absent.
	Key string
	// OrderID is the body's order_id, or empty if the body did not parse.
	OrderID string
	// Body is the request body as received.
	Body []byte
}

// Validate reports whether c can configure a Server.
func (c Config) Validate() error {
	if c.MaxKeyLength < 0 {
		return errors.New("refserver: negative MaxKeyLength")
	}
	if (fakes.Settings{Lease: c.Lease, Retention: c.Retention, RetryAfter: c.RetryAfter}).Validate() != nil || c.Latency < 0 {
		return errors.New("refserver: negative duration")
	}
	d := c.withPaths()
	paths := []string{d.Path, d.RefundPath, d.CapturePath, d.CancelPath}
	for i, p := range paths {
		if p[0] != '/' {
			return fmt.Errorf("refserver: path %q does not start with /", p)
		}
		if slices.Contains(paths[i+1:], p) {
			return fmt.Errorf("refserver: path %q serves two endpoints", p)
		}
	}
	return c.Faults.Validate()
}

// withDefaults returns c with zero fields filled in and Auth copied, so
// that a caller mutating its map later cannot change the server.
func (c Config) withDefaults() Config {
	c = c.withPaths()
	c.KeyHeader = orDefault(c.KeyHeader, DefaultKeyHeader)
	c.ReplayHeader = orDefault(c.ReplayHeader, DefaultReplayHeader)
	if c.MaxKeyLength == 0 {
		c.MaxKeyLength = DefaultMaxKeyLength
	}
	d := faults.Settings{Settings: fakes.Settings{Lease: c.Lease, Retention: c.Retention, Clock: c.Now}}.WithDefaults()
	c.Lease, c.Retention, c.Now = d.Lease, d.Retention, d.Clock
	auth := make(map[string]string, len(c.Auth))
	for secret, merchant := range c.Auth {
		auth[secret] = merchant
	}
	c.Auth = auth
	return c
}

// withPaths returns c with its empty paths defaulted.
func (c Config) withPaths() Config {
	c.Path = orDefault(c.Path, DefaultPath)
	c.RefundPath = orDefault(c.RefundPath, DefaultRefundPath)
	c.CapturePath = orDefault(c.CapturePath, DefaultCapturePath)
	c.CancelPath = orDefault(c.CancelPath, DefaultCancelPath)
	return c
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
