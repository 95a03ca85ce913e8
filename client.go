package idempay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"
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
	// the namespace that scopes every key. Default "default".
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
	// KeyRetention is the age past which an unresolved key is never resent,
	// because the provider may have forgotten it and would charge again.
	// Keep it below the provider's window (24 h for Stripe and Omise).
	// Default 23 h.
	KeyRetention time.Duration
	// Lease is how long this client holds an intent against other instances
	// sharing the store. A charge stops sending when its lease ends, even
	// before Retry.MaxElapsed, so that two instances never send one intent
	// at once (clocks permitting). Default Retry.MaxElapsed + 30 s.
	Lease time.Duration
	// Logger receives debug records of attempts and warnings. Default: none.
	Logger *slog.Logger
	// Clock returns the time; tests inject a fake. Default time.Now.
	Clock func() time.Time
	// NewKey makes an idempotency key for a new intent. Default: UUID v4.
	NewKey func() string
}

// Client charges payment intents exactly once. It is safe for concurrent
// use; make one per provider account and share it.
type Client struct {
	provider  Provider
	target    Target
	namespace string
	store     KeyStore
	hc        *http.Client // wrapped: counts attempts, no silent resends
	retry     RetryPolicy
	retention time.Duration
	lease     time.Duration
	log       *slog.Logger
	now       func() time.Time
	newKey    func() string
	owner     string // this instance, as lease owner
	flights   singleflight.Group
}

// DefaultKeyRetention is the default Config.KeyRetention.
const DefaultKeyRetention = 23 * time.Hour

// New checks cfg and returns a Client, or a *ConfigError.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		return nil, configErr("Store", "is nil; use keystore/filestore, keystore/postgres, keystore/redis or keystore/memstore")
	}
	if err := cfg.Retry.validate(); err != nil {
		return nil, err
	}
	if cfg.KeyRetention < 0 || cfg.Lease < 0 {
		return nil, configErr("KeyRetention/Lease", "must not be negative")
	}
	if cfg.Account != "" && hasControl(cfg.Account) {
		return nil, configErr("Account", "has control characters")
	}
	c := &Client{
		provider:  cfg.Provider,
		target:    Target{BaseURL: base, Credentials: cfg.Credentials},
		store:     cfg.Store,
		hc:        wrapHTTPClient(cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second})),
		retry:     cfg.Retry.withDefaults(),
		retention: cmp.Or(cfg.KeyRetention, DefaultKeyRetention),
		log:       cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		now:       cfg.Clock,
		newKey:    cfg.NewKey,
		owner:     uuid.NewString(),
	}
	if c.provider == nil {
		c.provider = OwnAPI{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.newKey == nil {
		c.newKey = uuid.NewString
	}
	c.namespace = c.provider.Name() + ":" + cmp.Or(cfg.Account, "default")
	c.target.Namespace = c.namespace
	c.lease = cmp.Or(cfg.Lease, c.retry.MaxElapsed+30*time.Second)
	return c, nil
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

// Charge charges req exactly once. See the package documentation for the
// outcome rules: on error, OutcomeOf(err) (or errors.Is with
// ErrOutcomeUnknown) says whether money may have moved.
//
// Bad input is refused with a *ValidationError before anything is stored
// or sent. Concurrent calls for the same intent in one process share one
// flight of requests.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (*Charge, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := c.provider.Validate(req); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// This call sends nothing, but it has not looked at the store: an
		// earlier call, here or on another instance, may have charged.
		return nil, &ChargeError{IntentID: req.IntentID, Key: req.Key, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, intent not looked up: %w", err)}
	}
	req.Currency = strings.ToUpper(req.Currency)
	fp := fingerprint(c.namespace, req)
	flight := c.flights.DoChan(fp+"\x00"+req.Key, func() (any, error) {
		return c.charge(ctx, req, fp)
	})
	var r singleflight.Result
	select {
	case r = <-flight:
	case <-ctx.Done():
		select {
		case r = <-flight: // it ended too: its answer says more
		default:
			// This caller stops waiting; a flight started by another
			// caller goes on under that caller's context.
			return nil, &ChargeError{IntentID: req.IntentID, Outcome: OutcomeUnknown,
				Err: fmt.Errorf("%w: stopped waiting: %w", ErrInProgress, ctx.Err())}
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	ch := *r.Val.(*Charge) // each caller gets its own copy
	return &ch, nil
}

// charge reserves the intent's key, then sends or answers from the store.
func (c *Client) charge(ctx context.Context, req ChargeRequest, fp string) (*Charge, error) {
	now := c.now().UTC().Truncate(time.Microsecond)
	key := req.Key
	if key == "" {
		key = c.newKey()
		if err := ValidateKey(key); err != nil {
			return nil, &ChargeError{IntentID: req.IntentID, Outcome: OutcomeUnknown,
				Err: fmt.Errorf("%w: Config.NewKey made a bad key: %w", ErrInvalidConfig, err)}
		}
	}
	res, err := c.store.Reserve(ctx, Record{
		Namespace: c.namespace, IntentID: req.IntentID, Key: key, Fingerprint: fp,
		State: StateOpen, CreatedAt: now, UpdatedAt: now,
		LeaseOwner: c.owner, LeaseUntil: now.Add(c.lease),
	})
	if err != nil {
		// Nothing was sent by this call, but without the record nobody can
		// tell whether an earlier call (or instance) sent the intent's key.
		return nil, &ChargeError{IntentID: req.IntentID, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("%w: reserve: %w", ErrStore, err)}
	}
	rec := res.Record
	switch {
	case rec.Fingerprint != fp || (req.Key != "" && rec.Key != req.Key):
		// This request is refused; the intent it names may well have
		// charged under its first parameters (see Client.Lookup).
		return nil, &ChargeError{IntentID: req.IntentID, Key: rec.Key, Outcome: OutcomeUnknown, Err: ErrIntentMismatch}
	case rec.State.Closed():
		return c.fromStore(rec)
	case !res.Claimed:
		return nil, &ChargeError{IntentID: req.IntentID, Key: rec.Key, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("%w: leased by another instance until %s", ErrInProgress, rec.LeaseUntil.Format(time.RFC3339))}
	case rec.State == StatePending:
		return c.settlePending(ctx, rec)
	case !res.Created && now.Sub(rec.CreatedAt) >= c.retention:
		return c.settleExpired(ctx, rec)
	}
	f := &flight{c: c, req: req, rec: rec, created: res.Created}
	v, cause := f.run(ctx)
	return c.conclude(ctx, f, v, cause)
}

// Unresolved lists up to limit intents of this client's namespace whose
// outcome is not known (open or pending), oldest first: after a restart,
// charge each again with its original request (or Settle it) to resume.
func (c *Client) Unresolved(ctx context.Context, limit int) ([]Record, error) {
	return c.store.ListOpen(ctx, c.namespace, limit)
}

// Lookup returns the stored record of an intent, or ErrNotFound.
func (c *Client) Lookup(ctx context.Context, intentID string) (Record, error) {
	return c.store.Load(ctx, c.namespace, intentID)
}

// Settle finds out how an unresolved intent ended without resending it,
// by asking a provider that implements Finder. A settled intent answers
// from the store.
func (c *Client) Settle(ctx context.Context, intentID string) (*Charge, error) {
	rec, err := c.store.Load(ctx, c.namespace, intentID)
	if err != nil {
		return nil, err
	}
	if rec.State.Closed() {
		return c.fromStore(rec)
	}
	v, err := c.find(ctx, rec)
	if err != nil {
		return nil, &ChargeError{IntentID: intentID, Key: rec.Key, Outcome: OutcomeUnknown, Err: err}
	}
	if v.Kind == KindNotFound {
		v.Kind = KindUnknown // a charge not found is not settled until the key may be resent
	}
	return c.concludeLookup(ctx, rec, v)
}

// find asks the provider for the intent's charge, outside the attempt count.
func (c *Client) find(ctx context.Context, rec Record) (Verdict, error) {
	finder, ok := c.provider.(Finder)
	if !ok {
		return Verdict{}, fmt.Errorf("%w: %s", ErrNoLookup, c.provider.Name())
	}
	return finder.FindCharge(withProbe(ctx, nil), c.hc, c.target, rec)
}

// ConfigError is a bad Config refused by New. It matches ErrInvalidConfig.
type ConfigError struct {
	Field  string
	Reason string
}

// Error names the field and why it was refused.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("idempay: config %s %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// ErrInvalidConfig is matched by every *ConfigError.
var ErrInvalidConfig = errors.New("idempay: invalid config")

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
