package idempay

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Provider adapts one payment API to the Client: it builds the request of
// one attempt and reads the answer. It holds no per-charge state, and the
// Client never special-cases a provider: everything that differs between
// providers (paths, encodings, headers, error bodies, replay spellings) is
// here.
//
// Optional capabilities are further interfaces found by type assertion, in
// the manner of database/sql/driver; this is the complete list:
//
//   - Finder: look a charge up by intent, to settle without resending.
//   - LookupBeforeResender: the provider does not de-duplicate by key, so every
//     resend (of a charge, a refund, a capture, a cancel) is preceded by a
//     lookup.
//   - KeyWindower: how long the provider keeps a key (default 24 h);
//     Config.KeyRetention must stay below it.
//   - ConfigChecker: refuse, in New, a configuration that would fail on
//     the first send (no credentials, a base URL with a path the adapter
//     appends itself).
//   - SecretFielder: members of the provider's answers that are secrets
//     (a client secret) and never reach the store, errors or logs.
//   - Operator: refund a charge, capture or cancel an authorisation
//     (Client.Refund, Capture, Cancel), and look them up; Operates says
//     which types it makes and finds.
//
// A Client whose provider is no Operator, or one that does not make the
// operation's type, refuses it with ErrNotSupported before anything is
// stored. The one
// rule for every method that reads an answer: never report a definite
// refusal (KindDeclined, KindInvalid) or KindNotFound when the provider may
// have done what was asked; say KindUnknown. internal/conformance checks
// each capability an adapter implements against that rule and the others.
type Provider interface {
	// Name is the provider part of every KeyStore namespace, e.g. "stripe".
	Name() string

	// Validate refuses, with a *ValidationError, what the provider could
	// not accept. It runs before anything is stored or sent.
	Validate(req ChargeRequest) error

	// NewChargeRequest builds one charge attempt carrying key. The Client
	// sends it as built, with the same body on every retry.
	NewChargeRequest(ctx context.Context, t Target, req ChargeRequest, key string) (*http.Request, error)

	// ReadCharge interprets the answer to a charge attempt. body is the
	// whole response body (capped at 1 MiB).
	ReadCharge(resp *http.Response, body []byte) Verdict
}

// Finder is implemented by providers that can look a charge up by its
// intent (Stripe's search by metadata, Omise's charge lookup, 2C2P's
// Payment Inquiry). The Client uses it to settle an intent whose key is
// past the retention window, and explicit Settle calls.
type Finder interface {
	// FindCharge looks for the charge of rec's intent. It answers a Verdict
	// of KindSucceeded, KindPending or KindDeclined when found, KindNotFound
	// only when the provider proves no charge exists, and KindUnknown (or an
	// error) when it cannot tell.
	FindCharge(ctx context.Context, hc *http.Client, t Target, rec Record) (Verdict, error)
}

// LookupBeforeResender is implemented by providers that do not de-duplicate by key
// (2C2P refuses a repeated invoice instead of replaying it; Omise documents
// no replay). When it answers true, the Client never resends a key that
// may have reached the provider without first asking FindCharge: found
// settles the intent, KindNotFound allows the resend, anything else
// leaves the outcome unknown.
type LookupBeforeResender interface {
	Finder
	LookupBeforeResend() bool
}

// KeyWindower is implemented by providers that say how long they keep an
// idempotency key. Past that a resent key charges again, so New refuses a
// Config.KeyRetention that is not shorter.
type KeyWindower interface {
	KeyWindow() time.Duration
}

// ConfigChecker is implemented by providers that can tell from the
// Client's target alone that every request would fail: credentials
// missing or of the wrong kind, a BaseURL that already holds the path the
// adapter appends (https://api.stripe.com/v1 would send
// /v1/v1/payment_intents). New calls CheckConfig before it returns, so the
// mistake is refused before anything is stored or sent; an error that is
// not a *ConfigError is wrapped in one (Field "Provider"), so it matches
// ErrConfig either way.
type ConfigChecker interface {
	CheckConfig(t Target) error
}

// SecretFielder is implemented by providers whose answers carry secrets
// besides the request's Source and the credentials (which are always taken
// out): Stripe's client_secret, say. The Client replaces those members'
// values, anywhere in the answer, before keeping it in Charge.Raw.
type SecretFielder interface {
	SecretFields() []string
}

// Target is where and as whom a Provider sends.
type Target struct {
	BaseURL     *url.URL
	Credentials Secret
	// Namespace is the Client's namespace (provider and account, see
	// Client.Namespace), which scopes every key: adapters tag what they
	// create with it, so that a lookup never settles one account's intent
	// with another account's charge on the same provider key.
	Namespace string
}

// Kind classifies what one answer says about the money and what to do next.
type Kind int

const (
	// KindUnknown: the answer cannot be classified or says money may have
	// moved without saying how it ended. Not retried by resending.
	KindUnknown Kind = iota
	// KindSucceeded: the provider charged. Verdict.Charge is set.
	KindSucceeded
	// KindPending: the provider accepted the charge and finishes it later
	// (3-D Secure). Verdict.Charge is set, with the provider's charge ID.
	KindPending
	// KindDeclined: a definite refusal stored for the key (a decline).
	KindDeclined
	// KindInvalid: the provider refused the parameters; not stored for the
	// key and not worth retrying.
	KindInvalid
	// KindConfig: credentials or endpoint refused (401, 403, 404, 501).
	KindConfig
	// KindKeyConflict: the key was used with other parameters.
	KindKeyConflict
	// KindInFlight: another request with the key is running (409). Retried.
	KindInFlight
	// KindRateLimited: refused before processing (429). Retried.
	KindRateLimited
	// KindServerError: a 5xx. Retried unless replayed.
	KindServerError
	// KindNotSent: the request never left (dial refused, DNS). Retried.
	KindNotSent
	// KindLost: the request was written and no answer came back (timeout,
	// reset, EOF). Retried with the same key.
	KindLost
	// KindNotFound: a lookup proved no charge exists for the intent.
	KindNotFound
)

var kindNames = [...]string{"unknown", "succeeded", "pending", "declined", "invalid", "config",
	"key_conflict", "in_flight", "rate_limited", "server_error", "not_sent", "lost", "not_found"}

// String is the kind in snake case, as logged.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Retry is a provider's explicit word on retrying (Stripe-Should-Retry).
type Retry int

const (
	RetryDefault Retry = iota // decide by Kind
	RetryYes                  // retry even if Kind would not
	RetryNo                   // do not retry whatever Kind says
)

// Verdict is a Provider's reading of one answer.
type Verdict struct {
	Kind      Kind
	Replayed  bool      // the provider marked the answer as a replay
	RequestID string    // the provider's request ID
	Retry     Retry     // the provider's explicit retry advice
	Charge    *Charge   // set for KindSucceeded and KindPending answers to a charge
	Err       *APIError // set for refusals and errors the provider explained
	// Operation is set instead of Charge for KindSucceeded and KindPending
	// answers to a refund, capture or cancel (see Operator).
	Operation *Operation
}

// ClassifyStatus gives the Kind an HTTP status means by itself, for
// adapters to refine with what the body says.
func ClassifyStatus(status int) Kind {
	switch {
	case status >= 200 && status < 300:
		return KindSucceeded
	case status == http.StatusPaymentRequired:
		return KindDeclined
	case status == http.StatusConflict:
		return KindInFlight
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == http.StatusUnauthorized, status == http.StatusForbidden,
		status == http.StatusNotFound, status == http.StatusMethodNotAllowed,
		status == http.StatusNotImplemented:
		return KindConfig
	case status >= 500:
		return KindServerError
	case status >= 400:
		return KindInvalid
	}
	return KindUnknown // 1xx, 3xx: a POST answered like that settles nothing
}

// AttemptOf returns, inside Provider.NewChargeRequest, the number of the
// intent's attempt the request is built for: 1, or n after n-1 definite
// failures. An adapter whose provider keys a payment by something derived
// from the intent (2C2P's invoiceNo) derives it from the attempt too, so
// that another card on a declined order is a payment of its own. Outside a
// charge it returns 1. FindCharge reads the attempt from Record.Attempt.
func AttemptOf(ctx context.Context) int {
	if p := probeFrom(ctx); p != nil && p.attempt > 0 {
		return p.attempt // the flight's probe carries it: one context value, not two
	}
	return 1
}
