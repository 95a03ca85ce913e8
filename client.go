package idempay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Charger is the one method most callers need, for mocking in their tests.
// *Client implements it; so does idempaytest's scripted fake.
type Charger interface {
	Charge(ctx context.Context, req ChargeRequest) (*Charge, error)
}

var _ Charger = (*Client)(nil)

// Config configures a Client. BaseURL and Store are required; every other
// zero field takes the default its comment names.
type Config struct {
	// BaseURL is the provider's API root, an absolute http or https URL.
	BaseURL string
	// Credentials is the provider API key; the adapter decides how it is sent.
	Credentials Secret
	// Account names the merchant account; with the provider's name it makes
	// the namespace that scopes every key ("<provider>:<account>"). It may
	// not contain "/", which separates a namespace from the namespaces of
	// its refunds, ledgers and keys: two accounts never share one.
	// Default "default".
	Account string
	// Provider speaks the payment API. Default OwnAPI{}.
	Provider Provider
	// Store keeps the keys. Required: use keystore/filestore for one
	// process, keystore/postgres or keystore/redis for a fleet.
	Store KeyStore
	// HTTPClient sends the requests. It is copied, never modified.
	// Default: a client with a 30 s timeout on http.DefaultTransport.
	HTTPClient *http.Client
	// Retry bounds retries; zero fields take DefaultRetryPolicy's.
	Retry RetryPolicy
	// KeyRetention is the age, on the store's clock, past which an
	// unresolved key is never resent, because the provider may have
	// forgotten it and would charge again. It must be shorter than the
	// provider's key window (ProviderKeyWindow: 24 h for Stripe and Omise)
	// and longer than Retry.MaxElapsed. Default 23 h.
	//
	// A key resumed an hour or more after it was reserved is first looked
	// up at the provider (Finder), wherever the operation can be: the
	// store's clock may have been set back while no Client read it, and
	// nothing then shows that the age it reads is too young. Where the
	// provider cannot be asked, the store's clock is all there is: keep
	// the database host's clock monotonic (slewed, never stepped back).
	KeyRetention time.Duration
	// Lease is how long a flight holds an intent against every other
	// flight, here or on other instances sharing the store. It is renewed
	// every Lease/3 while the flight runs, so it bounds how long a crashed
	// process keeps its intents from being resumed, not how long a charge
	// may take. No request leaves without lease time left. Default 5 s;
	// at least MinLease.
	Lease time.Duration
	// Instance names this process in lease owners and logs. Default: host
	// name and process ID.
	Instance string
	// Logger receives debug records of attempts and warnings. Default: none.
	Logger *slog.Logger
	// Clock returns the time, for elapsed-time measures only (backoff,
	// lease time left): every age that decides whether a key may be resent
	// comes from the store's clock. It must not jump back; tests inject a
	// fake. Its readings are also held against the store's, to notice a
	// store clock that runs ahead (lookups then start their windows that
	// much earlier), so a fake far behind the store's clock only widens
	// lookups. Default time.Now.
	Clock func() time.Time
	// NewKey makes an idempotency key for a new attempt. Default: UUID v4.
	NewKey func() string
	// Journal keeps the attempt journal (Client.Journal): every request of
	// every flight, written durably to the Store, one record per flight,
	// before the flight's outcome. It costs two store writes per flight.
	// Default off.
	Journal bool
}

// Defaults of Config.
const (
	DefaultKeyRetention = 23 * time.Hour
	DefaultLease        = 5 * time.Second
	// DefaultProviderKeyWindow is how long a provider keeps a key when its
	// adapter does not say (Stripe and Omise: 24 hours).
	DefaultProviderKeyWindow = 24 * time.Hour
)

// Client charges payment intents exactly once. It is safe for concurrent
// use; make one per provider account and share it, and Close it when done.
type Client struct {
	provider  Provider
	target    Target
	namespace string
	ledgerNS  string       // namespace + "/ledger", built once: every success reads and writes it
	store     KeyStore     // the configured store, behind haltedStore
	halted    *atomic.Bool // set once Close gave up waiting for flights
	hc        *http.Client // wrapped: counts attempts, no silent resends
	retry     RetryPolicy
	retention time.Duration
	claims    ClaimConfig
	log       *slog.Logger
	now       func() time.Time
	newKey    func() string
	journal   bool // Config.Journal
	flights   flightGroup
	secretFs  []string // the provider's SecretFields, asked once
}

// New checks cfg and returns a Client, or a *ConfigError.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	c := &Client{
		provider: cmp.Or[Provider](cfg.Provider, OwnAPI{}),
		halted:   new(atomic.Bool),
		retry:    cfg.Retry.withDefaults(),
		log:      cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		now:      cfg.Clock,
		newKey:   cfg.NewKey,
		journal:  cfg.Journal,
	}
	if c.now == nil {
		c.now = time.Now
	}
	prov := &providerClock{}
	c.hc = wrapHTTPClient(cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second}), newRetryBudget(c.retry), prov, c.now)
	c.store = haltedStore{KeyStore: cfg.Store, halted: c.halted}
	c.secretFs = secretFields(c.provider)
	if c.newKey == nil {
		c.newKey = uuid.NewString
	}
	c.retention = cmp.Or(cfg.KeyRetention, DefaultKeyRetention)
	if err := checkTimes(c.retry, c.retention, keyWindow(c.provider)); err != nil {
		return nil, err
	}
	if err := checkProviderName(c.provider.Name()); err != nil {
		return nil, err
	}
	c.namespace = c.provider.Name() + ":" + cmp.Or(cfg.Account, "default")
	c.ledgerNS = c.namespace + "/ledger"
	c.target = Target{BaseURL: base, Credentials: cfg.Credentials, Namespace: c.namespace}
	if err := checkProvider(c.provider, c.target); err != nil {
		return nil, err
	}
	c.claims = ClaimConfig{Store: c.store, Lease: cmp.Or(cfg.Lease, DefaultLease), MaxAge: c.retention,
		Instance: cmp.Or(cfg.Instance, defaultInstance()), Clock: c.now, Logger: c.log, floor: &storeFloor{prov: prov}}
	return c, nil
}

// checkConfig refuses the fields of cfg that are wrong on their own.
func checkConfig(cfg Config) error {
	switch {
	case isNil(cfg.Store):
		return configErr("Store", "is nil; use keystore/filestore, keystore/postgres, keystore/redis or keystore/memstore")
	case cfg.Provider != nil && isNil(cfg.Provider):
		return configErr("Provider", "is a nil pointer")
	case cfg.KeyRetention < 0:
		return configErr("KeyRetention", "must not be negative")
	case cfg.Lease != 0 && cfg.Lease < MinLease:
		return configErr("Lease", "%s is shorter than MinLease (%s): renewals could not keep it", cfg.Lease, MinLease)
	case cfg.Account != "" && hasControl(cfg.Account):
		return configErr("Account", "has control characters")
	case strings.Contains(cfg.Account, "/"):
		return configErr("Account", "%q contains \"/\", which would make it share a namespace with another account's refunds, ledgers or keys", cfg.Account)
	case cfg.Instance != "" && (hasControl(cfg.Instance) || len(cfg.Instance) > 100):
		return configErr("Instance", "must be at most 100 characters without control characters")
	}
	return cfg.Retry.validate()
}

// checkProviderName refuses a provider name that would make the namespace
// ambiguous: the name ends at the first ":", and "/" begins the namespaces
// of operations, so (name, account) → namespace is one to one.
func checkProviderName(name string) error {
	switch {
	case name == "":
		return configErr("Provider", "has an empty Name")
	case strings.ContainsAny(name, ":/") || hasControl(name):
		return configErr("Provider", "Name %q contains \":\", \"/\" or control characters: namespaces of two accounts could be one", name)
	}
	return nil
}

// checkTimes refuses a retention that could let a key be resent after the
// provider forgot it, directly or by a retry loop outlasting it.
func checkTimes(p RetryPolicy, retention, window time.Duration) error {
	switch {
	case retention >= window:
		return configErr("KeyRetention", "%s is not shorter than the provider's key window %s: a key resent then would charge again", retention, window)
	case p.MaxElapsed >= retention:
		return configErr("Retry.MaxElapsed", "%s is not shorter than KeyRetention %s", p.MaxElapsed, retention)
	}
	return nil
}

// checkProvider asks the provider, if it can tell, whether t could work.
func checkProvider(p Provider, t Target) error {
	cc, ok := p.(ConfigChecker)
	if !ok {
		return nil
	}
	err := cc.CheckConfig(t)
	var ce *ConfigError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return &ConfigError{Field: "Provider", Reason: err.Error()}
}

// keyWindow is how long the provider keeps a key.
func keyWindow(p Provider) time.Duration {
	if w, ok := p.(KeyWindower); ok && w.KeyWindow() > 0 {
		return w.KeyWindow()
	}
	return DefaultProviderKeyWindow
}

func defaultInstance() string {
	host, _ := os.Hostname()
	return cmp.Or(host, "host") + ":" + strconv.Itoa(os.Getpid())
}

// isNil reports whether v is nil or a typed nil pointer, map, slice,
// function or channel inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, configErr("BaseURL", "is empty")
	case err != nil:
		return nil, configErr("BaseURL", "does not parse: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, configErr("BaseURL", "%q needs an http or https scheme", raw)
	case u.Host == "":
		return nil, configErr("BaseURL", "%q has no host", raw)
	case u.User != nil:
		return nil, configErr("BaseURL", "must not carry credentials; use Config.Credentials")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Namespace is the scope of this client's keys: provider and account.
func (c *Client) Namespace() string { return c.namespace }

// Charge charges req exactly once. OutcomeOf(err) says what happened to the
// money, and a caller who switches on it alone is right:
//
//   - nil error: succeeded. The *Charge says how (fresh or replayed).
//   - OutcomePending: the provider accepted the charge but money has not
//     moved yet (3-D Secure, a hosted page, konbini). Charge returns the
//     pending *Charge (AuthorizeURL, ...) and an error matching ErrPending;
//     settle it later by webhook, Settle or another Charge.
//   - OutcomeFailed: definitely no money moved. Charging the intent again
//     with other parameters (another card) starts a new attempt.
//   - OutcomeUnknown: money may have moved. Charge the intent again with
//     the same request (or Settle it) to find out; never treat it as failed.
//
// Bad input is refused with a *ValidationError before anything is stored
// or sent. Calls for one intent in one process run one at a time, and
// identical concurrent calls share one flight. The flight runs to its own
// end, bounded by the retry policy, even if ctx ends first: the outcome is
// recorded, and a caller who stopped waiting gets ErrStoppedWaiting.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (*Charge, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := c.provider.Validate(req); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// This call sends nothing, but it has not looked at the store: an
		// earlier call, here or on another instance, may have charged.
		return nil, &ChargeError{IntentID: req.IntentID, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, intent not looked up: %w", err)}
	}
	req.Currency = strings.ToUpper(req.Currency)
	return c.flights.do(ctx, c, chargeOp{c: c, req: req, fp: fingerprint(c.namespace, req)})
}

// Close stops the client: Charge and Settle refuse new calls with ErrClosed,
// and Close waits, until ctx ends, for the flights still running to record
// their outcomes. If some did not finish in time it returns ctx's error,
// and from then on those flights send nothing more and the client touches
// the store no more: their intents stay open, their leases run out within
// one Lease, and another instance (or the next start) resumes them.
func (c *Client) Close(ctx context.Context) error {
	err := c.flights.close(ctx)
	if err != nil {
		c.halted.Store(true)
	}
	return err
}

// Unresolved yields every intent of this client's namespace whose outcome
// is not known (open or pending), page by page, in the store's order: after
// a restart, charge each again with its original request (or Settle it) to
// resume. It reaches every record however many stay open before it. An
// error ends the sequence.
func (c *Client) Unresolved(ctx context.Context) iter.Seq2[Record, error] {
	return c.unresolved(ctx, c.namespace)
}

func (c *Client) unresolved(ctx context.Context, namespace string) iter.Seq2[Record, error] {
	const page = 100
	return func(yield func(Record, error) bool) {
		var after Cursor
		for {
			recs, err := c.store.ListOpen(ctx, namespace, after, page)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for _, r := range recs {
				if !yield(r, nil) {
					return
				}
			}
			if len(recs) < page {
				return
			}
			after = CursorOf(recs[len(recs)-1])
		}
	}
}

// Record returns the stored record of an intent (its current attempt and
// earlier ones), or an error matching ErrNotFound. It reads the KeyStore
// only; it never asks the provider.
func (c *Client) Record(ctx context.Context, intentID string) (Record, error) {
	return c.store.Load(ctx, c.namespace, intentID)
}

// Settle finds out how an unsettled intent ended without resending it, by
// asking a provider that implements Finder, and records what it learns. A
// settled intent answers from the store. Settle takes the intent's lease
// only when it is free; it may run while a charge of the intent is on the
// wire (from a webhook, say), and then records only a success (which
// closes the intent for good), never a pending or failed outcome that would
// free that charge's lease to another sender. Its return values read like
// Charge's.
func (c *Client) Settle(ctx context.Context, intentID string) (*Charge, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	return c.flights.settle(ctx, c, chargeOp{c: c, req: ChargeRequest{IntentID: intentID}})
}

// ConfigError is a bad Config refused by New. It matches ErrConfig.
type ConfigError struct {
	Field  string
	Reason string
}

// Error names the field and why it was refused.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("idempay: config %s %s", e.Field, e.Reason)
}

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// ErrInvalidConfig is ErrConfig, the one sentinel of a wrong configuration.
//
// Deprecated: use ErrConfig, which every *ConfigError matches.
var ErrInvalidConfig = ErrConfig

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
