package stripetest

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Option configures a Server. Options check their input; NewServer panics
// on a bad one, as a fixture built wrong should stop the test at once.
type Option func(*config) error

// config is what the options set.
type config struct {
	faults.Settings
	apiKey         string
	searchDelay    time.Duration
	storedDeclines bool
	shouldRetry    bool
	pendingRefunds bool
	hook           func(RequestInfo)
}

// RequestInfo describes a POST (a charge, refund, capture or cancel) as it
// arrives, before any fault or processing.
type RequestInfo struct {
	Request *http.Request // its body has been read: use Form
	// Op is "refund", "capture" or "cancel" for an operation, empty for a
	// charge (POST /v1/payment_intents).
	Op     string
	Key    string // the Idempotency-Key header, trimmed
	Intent string // metadata[idempay_intent], if present
	OpID   string // metadata[idempay_op], if present
	// Account is the Stripe-Account header (Stripe Connect's connected
	// account), empty for a request on the platform's own account.
	Account string
	Form    url.Values // the parsed body
}

// WithAPIKey makes key the only secret key accepted (Authorization:
// Bearer key); without it any non-empty bearer secret is, and each secret
// is its own account. It is refused if key is empty or has spaces.
func WithAPIKey(key string) Option {
	return func(c *config) error {
		if key == "" || strings.ContainsAny(key, " \t\r\n") {
			return errors.New("API key is empty or has spaces")
		}
		c.apiKey = key
		return nil
	}
}

// WithSettings sets what every fake is configured with: lease, key
// retention, clock, Retry-After, how connections drop and close, leniency
// (see fakes.Settings). Zero fields keep the defaults or what an earlier
// WithSettings set. It is refused, with fakes.ErrBadSettings, for a
// negative duration.
func WithSettings(s fakes.Settings) Option { return func(c *config) error { return c.SetSettings(s) } }

// WithFaultRates injects random faults at rates r into every POST, drawn
// from a source seeded with seed: the same seed and the same order of
// requests give the same faults. It is refused, with fakes.ErrBadRates,
// if a rate is outside [0, 1] or they sum to more than 1.
func WithFaultRates(r fakes.Rates, seed uint64) Option {
	return func(c *config) error { return c.SetFaults(r, seed) }
}

// WithSearchDelay hides a PaymentIntent from search until d after its
// creation: Stripe's search is eventually consistent. It is refused if d
// is negative.
func WithSearchDelay(d time.Duration) Option {
	return func(c *config) error { return faults.SetDelay(&c.searchDelay, d, "search delay") }
}

// WithStoredDeclines answers a declined confirmation with a 500 stored
// under its key, as Stripe does when a request fails after it started
// executing, while the PaymentIntent stays as the decline left it
// (requires_payment_method with a last_payment_error): the 402 is never
// seen, the intent is found only by search.
func WithStoredDeclines() Option {
	return func(c *config) error { c.storedDeclines = true; return nil }
}

// WithShouldRetry sends Stripe-Should-Retry: true on 409 and 503 answers
// and false on 400, 402 and 500 answers.
func WithShouldRetry() Option { return func(c *config) error { c.shouldRetry = true; return nil } }

// WithPendingRefunds makes every new refund pending (status "pending")
// until CompleteRefund settles it. A pending refund counts against what is
// left to refund; a failed one frees its amount.
func WithPendingRefunds() Option {
	return func(c *config) error { c.pendingRefunds = true; return nil }
}

// WithHook calls hook for every POST as it arrives, before any fault, on
// the handler's goroutine (a hook that blocks holds the request): to check,
// say, that the client stored its key before sending it. It is refused if
// hook is nil.
func WithHook(hook func(RequestInfo)) Option {
	return func(c *config) error { return faults.SetHook(&c.hook, hook) }
}

// WithTest ties the server to t: when t ends the server is closed (its
// handlers finish, so the books are final) and t fails if CheckMoney finds
// money moved wrong. It is refused if t is nil.
func WithTest(t testing.TB) Option { return func(c *config) error { return c.SetTest(t) } }
