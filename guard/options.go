package guard

import (
	"cmp"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay"
)

// Defaults of the options.
const (
	// DefaultLease is how long each claim or renewal of a key's lease lasts
	// while its handler runs. The lease is renewed every third of it, so a
	// handler may take as long as it needs; a process that dies mid-handler
	// keeps the key locked (409) at most this long.
	DefaultLease = 10 * time.Second
	// DefaultMaxBody is the largest request body read (413 above it).
	DefaultMaxBody = 1 << 20
	// DefaultMaxResponse is the largest response body stored for replay.
	DefaultMaxResponse = 64 << 10
	// DefaultMinKeyLength and DefaultMaxKeyLength bound an Idempotency-Key.
	// 16 characters refuse keys too short to be unique per payment (a
	// counter, a timestamp); 255 is what idempay.ChargeRequest.Key takes.
	DefaultMinKeyLength = 16
	DefaultMaxKeyLength = idempay.MaxKeyLength
	// DefaultScope names the guard's namespace when WithScope is not given.
	DefaultScope = "default"
)

// NamespacePrefix starts the KeyStore namespace of every Guard, so that
// guarded requests never share a namespace with charge intents
// ("ownapi:...", "stripe:...") or webhook events ("webhook:...") in one
// store.
const NamespacePrefix = "guard:"

// An Option configures New. Options validate their input: New returns a
// *ConfigError, matching ErrInvalidConfig, for the first one refused.
type Option func(*config) error

// config is what the options set.
type config struct {
	identity    func(*http.Request) (string, error)
	scope       string
	methods     []string
	lease       time.Duration
	maxBody     int64
	maxResponse int
	minKey      int
	maxKey      int
	replay      []string // canonical header names kept for replay
	secret      []string // canonical header names never kept
	clock       func() time.Time
	instance    string
	logger      *slog.Logger
	observer    func(Event)
}

func defaultConfig() config {
	return config{
		scope:       DefaultScope,
		methods:     []string{http.MethodPost, http.MethodPatch},
		lease:       DefaultLease,
		maxBody:     DefaultMaxBody,
		maxResponse: DefaultMaxResponse,
		minKey:      DefaultMinKeyLength,
		maxKey:      DefaultMaxKeyLength,
		replay:      DefaultReplayHeaders(),
		secret:      DefaultSecretHeaders(),
		clock:       time.Now,
		instance:    defaultInstance(),
		logger:      slog.New(slog.DiscardHandler),
	}
}

func newConfig(opts []Option) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return c, configErr("Option", "is nil")
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	if c.identity == nil {
		return c, configErr("WithIdentity", "is required: keys are scoped per caller, so that one tenant's key never replays another's "+
			"(pass WithIdentity(SingleTenant) if every caller shares one key space)")
	}
	for _, h := range c.replay {
		if slices.Contains(c.secret, h) {
			return c, configErr("WithReplayHeaders", "%s is a header never stored", h)
		}
	}
	return c, nil
}

// WithIdentity is required: it names the caller of a request (a tenant, a
// merchant account, an authenticated principal, or all three joined), as
// the application's authentication established it. Keys are scoped by it,
// so one caller's key never reaches another's record, and it is part of
// the fingerprint. fn runs before the body is read; an error or an empty
// identity answers 401. Run the guard after the authentication middleware.
func WithIdentity(fn func(r *http.Request) (string, error)) Option {
	return func(c *config) error {
		if fn == nil {
			return configErr("WithIdentity", "nil function")
		}
		c.identity = fn
		return nil
	}
}

// SingleTenant is an identity function for a service with one caller
// space: every request has the identity "-". Say so explicitly with
// WithIdentity(SingleTenant); a Guard without WithIdentity is refused.
func SingleTenant(*http.Request) (string, error) { return "-", nil }

// WithScope names the guard's namespace, NamespacePrefix + scope, to keep
// apart guards sharing one store (one per route, or per service): 1 to 64
// characters of [a-z0-9._-]. Default DefaultScope.
func WithScope(scope string) Option {
	return func(c *config) error {
		if scope == "" || len(scope) > 64 || strings.Trim(scope, "abcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
			return configErr("WithScope", "%q must be 1 to 64 characters of [a-z0-9._-]", scope)
		}
		c.scope = scope
		return nil
	}
}

// WithMethods sets the methods that require a key (default POST and
// PATCH). Requests with other methods pass through unguarded. GET, HEAD,
// OPTIONS and TRACE are refused: they are safe by definition, and a guard
// on them would only lock reads.
func WithMethods(methods ...string) Option {
	return func(c *config) error {
		if len(methods) == 0 {
			return configErr("WithMethods", "no method")
		}
		var out []string
		for _, m := range methods {
			switch {
			case m == "" || strings.ToUpper(m) != m || strings.ContainsFunc(m, notTokenChar):
				return configErr("WithMethods", "%q is not an upper-case method token", m)
			case m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions || m == http.MethodTrace:
				return configErr("WithMethods", "%s is a safe method", m)
			}
			out = append(out, m)
		}
		c.methods = out
		return nil
	}
}

func notTokenChar(r rune) bool {
	return r > 0x7e || r <= 0x20 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}

// WithLease sets the term of the lease a request holds on its key while
// the handler runs (default DefaultLease), renewed every third of it. It
// is refused below idempay.MinLease.
func WithLease(d time.Duration) Option {
	return func(c *config) error {
		if d < idempay.MinLease {
			return configErr("WithLease", "%s is shorter than idempay.MinLease (%s)", d, idempay.MinLease)
		}
		c.lease = d
		return nil
	}
}

// WithMaxBody sets the largest request body read and fingerprinted
// (default DefaultMaxBody); a longer one is answered 413 and the handler
// does not run. It must be positive.
func WithMaxBody(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return configErr("WithMaxBody", "%d is not positive", n)
		}
		c.maxBody = n
		return nil
	}
}

// WithMaxResponse sets the largest response body stored for replay
// (default DefaultMaxResponse), between 1 byte and 16 MiB. A response that
// should be stored but is larger is sent, and what is stored instead makes
// every replay a 500 "response not stored" (see README.md): set the
// limit above the largest answer of the guarded routes.
func WithMaxResponse(n int) Option {
	return func(c *config) error {
		if n <= 0 || n > 16<<20 {
			return configErr("WithMaxResponse", "%d is not between 1 and 16 MiB", n)
		}
		c.maxResponse = n
		return nil
	}
}

// WithKeyLength sets how long an Idempotency-Key may be, after the quotes
// of the structured-field form are removed (default DefaultMinKeyLength to
// DefaultMaxKeyLength). It is refused unless 1 <= min <= max <= 255.
func WithKeyLength(min, max int) Option {
	return func(c *config) error {
		if min < 1 || min > max || max > idempay.MaxKeyLength {
			return configErr("WithKeyLength", "want 1 <= min (%d) <= max (%d) <= %d", min, max, idempay.MaxKeyLength)
		}
		c.minKey, c.maxKey = min, max
		return nil
	}
}

// WithReplayHeaders adds response headers to those stored and replayed
// (DefaultReplayHeaders). A header that is not in the list is not stored:
// a replay carries the stored headers only. Headers never stored
// (DefaultSecretHeaders, WithSecretHeaders) are refused.
func WithReplayHeaders(names ...string) Option {
	return func(c *config) error {
		for _, n := range names {
			if n == "" || strings.ContainsFunc(n, notTokenChar) {
				return configErr("WithReplayHeaders", "%q is not a header name", n)
			}
			c.replay = appendNew(c.replay, http.CanonicalHeaderKey(n))
		}
		return nil
	}
}

// WithSecretHeaders adds response headers that are never stored, whatever
// WithReplayHeaders says: an application's own credentials or session
// headers.
func WithSecretHeaders(names ...string) Option {
	return func(c *config) error {
		for _, n := range names {
			if n == "" || strings.ContainsFunc(n, notTokenChar) {
				return configErr("WithSecretHeaders", "%q is not a header name", n)
			}
			c.secret = appendNew(c.secret, http.CanonicalHeaderKey(n))
		}
		return nil
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(slices.Clone(list), s)
}

// DefaultReplayHeaders returns the response headers stored and replayed
// unless WithReplayHeaders adds more. The rule: a header is replayed when
// the body cannot be read right without it, or it says what the request
// did, and it is not about one connection or one client's credentials:
//
//   - the representation: Content-Type (as it went out, a sniffed one
//     included), Content-Encoding, Content-Language, Content-Location,
//     Content-Disposition, Content-Digest, Repr-Digest;
//   - what the request created or points to: Location, Link;
//   - validators and caching: ETag, Last-Modified, Cache-Control, Expires,
//     Vary;
//   - when to come back: Retry-After; the provider's Request-Id.
func DefaultReplayHeaders() []string {
	return []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Location",
		"Content-Disposition", "Content-Digest", "Repr-Digest", "Location", "Link",
		"Etag", "Last-Modified", "Cache-Control", "Expires", "Vary", "Retry-After", "Request-Id"}
}

// DefaultSecretHeaders returns the response headers never stored: those
// that carry credentials or sessions, those that describe one connection,
// and those the replay sets itself.
func DefaultSecretHeaders() []string {
	return []string{"Set-Cookie", "Set-Cookie2", "Authorization", "Proxy-Authorization", "Cookie",
		"Www-Authenticate", "Proxy-Authenticate", "Authentication-Info", "Proxy-Authentication-Info",
		"Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Te", "Trailer",
		"Content-Length", "Date", "Idempotency-Replayed"}
}

// WithClock sets the clock the lease is measured with on this side (the
// store stamps its own); it must not jump back. Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return configErr("WithClock", "nil function")
		}
		c.clock = now
		return nil
	}
}

// WithInstance names this process in lease owners (default "guard@" host
// name ":" process ID), so that a key stuck under a lease says who took it:
// 1 to 100 printable ASCII characters. Each request adds a random suffix,
// so two requests never share a lease.
func WithInstance(name string) Option {
	return func(c *config) error {
		if name == "" || len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			return configErr("WithInstance", "must be 1 to 100 printable ASCII characters")
		}
		c.instance = name
		return nil
	}
}

// WithLogger receives warnings: a response the store did not record, a
// release that failed. Records name the namespace and the hashed record ID,
// never the key's caller, a header or a body.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return configErr("WithLogger", "nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithObserver calls fn once per guarded request with what the guard did,
// after the answer is written: for metrics, tests and simulators. fn runs
// on the request's goroutine and must not block.
func WithObserver(fn func(Event)) Option {
	return func(c *config) error {
		if fn == nil {
			return configErr("WithObserver", "nil function")
		}
		c.observer = fn
		return nil
	}
}

func defaultInstance() string {
	host, _ := os.Hostname()
	name := "guard@" + cmp.Or(host, "host") + ":" + strconv.Itoa(os.Getpid())
	if len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "guard"
	}
	return name
}
