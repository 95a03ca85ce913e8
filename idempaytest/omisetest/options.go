package omisetest

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
	secretKey      string
	honourKeys     bool
	listDelay      time.Duration
	neighbours     int
	lookupFailures float64
	pendingRefunds bool
	hook           func(RequestInfo)
}

// RequestInfo describes a POST (a charge, refund, capture or reverse) as
// it arrives, before any fault or processing.
type RequestInfo struct {
	Request *http.Request // its body has been read: use Form
	// Op is "refund", "capture" or "cancel" (a reverse) for an operation,
	// empty for a charge (POST /charges).
	Op     string
	Charge string     // the charge an operation acts on, chrg_... from the path
	Key    string     // the Idempotency-Key header, trimmed
	Intent string     // metadata[idempay_intent], if present
	OpID   string     // metadata[idempay_op], if present
	Form   url.Values // the parsed body
}

// WithSecretKey makes key the only secret key accepted (HTTP Basic, the
// key as user, an empty password); without it any non-empty user is, and
// each is its own account. It is refused if key is empty or has spaces.
func WithSecretKey(key string) Option {
	return func(c *config) error {
		if key == "" || strings.ContainsAny(key, " \t\r\n:") {
			return errors.New("secret key is empty or has spaces or a colon")
		}
		c.secretKey = key
		return nil
	}
}

// WithIdempotencyKeys makes the server de-duplicate every POST by its
// Idempotency-Key (answering the stored answer again, with no replay
// header), which Omise does not document. Without it the header is
// ignored, as an adapter must assume.
func WithIdempotencyKeys() Option { return func(c *config) error { c.honourKeys = true; return nil } }

// WithSettings sets what every fake is configured with: lease and
// retention of honoured keys, clock, Retry-After, how connections drop and
// close, leniency (see fakes.Settings). Zero fields keep the defaults or
// what an earlier WithSettings set. It is refused, with
// fakes.ErrBadSettings, for a negative duration.
func WithSettings(s fakes.Settings) Option { return func(c *config) error { return c.SetSettings(s) } }

// WithFaultRates injects random faults at rates r into every POST, drawn
// from a source seeded with seed: the same seed and the same order of
// requests give the same faults. It is refused, with fakes.ErrBadRates,
// if a rate is outside [0, 1] or they sum to more than 1.
func WithFaultRates(r fakes.Rates, seed uint64) Option {
	return func(c *config) error { return c.SetFaults(r, seed) }
}

// WithListDelay hides a charge from GET /charges until d after its
// creation: a lagging list, or a charge still being created when the list
// is read. It is refused if d is negative.
func WithListDelay(d time.Duration) Option {
	return func(c *config) error { return faults.SetDelay(&c.listDelay, d, "list delay") }
}

// WithNeighbors makes the account busy with another integration: every
// n-th charge request that reaches processing is preceded by a charge that
// integration makes on the same account, in the shape of Omise's recorded
// charges (metadata with numbers and booleans, no idempay tags, some
// declined). Lookups by listing must read past them. It is refused if n is
// not positive.
func WithNeighbors(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return errors.New("neighbours must be positive")
		}
		c.neighbours = n
		return nil
	}
}

// WithLookupFailures makes each lookup (GET /charges, /charges/{id} and
// their refunds) answer 503 with probability p, drawn from the seeded
// source: lookups fail too, and a failed lookup must never allow a resend.
// It is refused if p is outside [0, 1].
func WithLookupFailures(p float64) Option {
	return func(c *config) error {
		if !(p >= 0 && p <= 1) {
			return errors.New("lookup failure rate outside [0, 1]")
		}
		c.lookupFailures = p
		return nil
	}
}

// WithPendingRefunds makes every new refund pending (status "pending")
// until CompleteRefund settles it. A pending refund counts against what is
// left to refund; a failed one frees its amount.
func WithPendingRefunds() Option {
	return func(c *config) error { c.pendingRefunds = true; return nil }
}

// WithHook calls hook for every POST as it arrives, before any fault, on
// the handler's goroutine. It is refused if hook is nil.
func WithHook(hook func(RequestInfo)) Option {
	return func(c *config) error { return faults.SetHook(&c.hook, hook) }
}

// WithTest ties the server to t: when t ends the server is closed (its
// handlers finish, so the books are final) and t fails if CheckMoney finds
// money moved wrong. It is refused if t is nil.
func WithTest(t testing.TB) Option { return func(c *config) error { return c.SetTest(t) } }
