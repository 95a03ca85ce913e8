package stripetest

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the fake Stripe API on a loopback port, like an
// httptest.Server: its URL, Start, Client and Close are the embedded
// fakes.Loopback's. Its faults are scripted with the embedded fakes.Script's
// Fail, FailKey, FailNext and SetFaultRates; here Fail's id is an intent
// (metadata[idempay_intent]) for charge requests, an operation ID
// (metadata[idempay_op]) for refunds and captures, or a PaymentIntent
// (pi_...) for any operation on it, which is how a cancel, carrying no
// metadata, is scripted. It is also an http.Handler, for tests that serve
// it themselves. Its methods are safe for concurrent use, also while
// requests are served, and its books and counters stay readable after
// Close. Make one with NewServer or NewUnstartedServer; the zero Server is
// not usable.
type Server struct {
	*fakes.Loopback
	*fakes.Script

	cfg     config
	ledger  *fakes.Ledger
	keys    *faults.KeyTable
	charges *faults.Gate // POST /v1/payment_intents
	ops     *faults.Gate // POST /v1/refunds, .../capture, .../cancel
	intents *intentStore

	retrievals, searches, refundLookups atomic.Int64
	byAccount                           accountCounts
}

// NewServer starts a Server. Without options it accepts any bearer secret,
// honours Idempotency-Key as Stripe does and injects no faults. It panics
// if an option is refused or it cannot listen, as httptest.NewServer does.
// Call Close when done, or give WithTest.
func NewServer(opts ...Option) *Server {
	s := NewUnstartedServer(opts...)
	s.Start()
	return s
}

// NewUnstartedServer returns a Server that is not listening yet: call
// Start, or serve it yourself (it is an http.Handler). It panics if an
// option is refused.
func NewUnstartedServer(opts ...Option) *Server {
	var c config
	faults.Apply("stripetest", &c, opts)
	c.Settings = c.WithDefaults()
	s := &Server{Script: fakes.NewScript(c.Faults, c.Seed), cfg: c, ledger: &fakes.Ledger{},
		keys: faults.NewKeyTable(c.Lease, c.Retention), intents: newIntentStore()}
	s.Loopback = fakes.NewLoopback(s)
	s.charges, s.ops = s.gate(), s.gate()
	c.Check(s.Close, s.CheckMoney)
	return s
}

// gate is how a POST starts and ends here: the one fault injector, its
// own counts, Stripe's 503, replay mark and retry advice.
func (s *Server) gate() *faults.Gate {
	g := s.cfg.Gate(s.Script)
	g.Unavailable = func(w http.ResponseWriter) {
		writeJSON(w, http.StatusServiceUnavailable, (&apiError{Type: faults.TypeAPI,
			Message: "Stripe is temporarily unavailable."}).body())
	}
	g.Mark = func(h http.Header, status int, replayed bool) {
		if replayed {
			h.Set("Idempotent-Replayed", "true")
		}
		if !s.cfg.shouldRetry {
			return
		}
		switch status {
		case http.StatusConflict, http.StatusServiceUnavailable:
			h.Set("Stripe-Should-Retry", "true")
		case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusInternalServerError:
			h.Set("Stripe-Should-Retry", "false")
		}
	}
	g.Write = writeJSON
	return g
}

// Ledger returns the books: every charge (a succeeded or authorised
// PaymentIntent) and every refund, capture and cancel.
func (s *Server) Ledger() *fakes.Ledger { return s.ledger }

// CheckMoney returns a *fakes.MoneyError naming every way money moved wrong
// (an intent charged twice, a refund made twice, refunds beyond the
// charge, ...), or nil. Call it when the test's requests are done.
func (s *Server) CheckMoney() error { return s.ledger.Check() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{Traffic: s.charges.Traffic.Snapshot(), Ops: s.ops.Traffic.Snapshot(),
		Retrievals: int(s.retrievals.Load()), Searches: int(s.searches.Load()), RefundLookups: int(s.refundLookups.Load()),
		ByAccount: s.byAccount.snapshot()}
}

// ServeHTTP routes the endpoints the fake serves (see README.md).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fakes.StampDate(w.Header(), s.now())
	w.Header().Set("Request-Id", newID("req_"))
	s.byAccount.add(r.Header.Get(connectHeader))
	if v := r.Header.Get("Stripe-Version"); v != "" {
		w.Header().Set("Stripe-Version", v)
	}
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	if !connected(w, r) {
		return
	}
	if h := s.route(r.Method, r.URL.Path); h != nil {
		h(w, r)
		return
	}
	writeError(w, http.StatusNotFound, &apiError{Type: faults.TypeInvalid,
		Message: "Unrecognized request URL (" + r.Method + ": " + r.URL.Path + ")"})
}

// route returns the handler of method and path, or nil.
func (s *Server) route(method, path string) http.HandlerFunc {
	const intents, refunds = "/v1/payment_intents", "/v1/refunds"
	get, post := method == http.MethodGet, method == http.MethodPost
	rest, underIntents := strings.CutPrefix(path, intents+"/")
	id, verb, _ := strings.Cut(rest, "/")
	refund, underRefunds := strings.CutPrefix(path, refunds+"/")
	switch {
	case path == intents && post:
		return s.handleCreate
	case path == intents+"/search" && get:
		return s.handleSearch
	case underIntents && verb == "" && get:
		return func(w http.ResponseWriter, r *http.Request) { s.handleRetrieve(w, r, id) }
	case underIntents && (verb == "capture" || verb == "cancel") && post:
		return func(w http.ResponseWriter, r *http.Request) { s.handleIntentOp(w, r, id, verb) }
	case path == refunds && post:
		return s.handleRefund
	case path == refunds && get:
		return s.handleListRefunds
	case underRefunds && !strings.Contains(refund, "/") && get:
		return func(w http.ResponseWriter, r *http.Request) { s.handleRetrieveRefund(w, r, refund) }
	}
	return nil
}

// Complete finishes a PaymentIntent waiting in requires_action or
// processing, as the customer completing 3-D Secure (or the bank settling)
// would: it succeeds (or waits in requires_capture when its capture_method
// is manual), or fails back to requires_payment_method with an
// authentication error. It reports whether such an intent was found.
func (s *Server) Complete(id string, succeed bool) bool {
	return s.intents.complete(id, succeed, s.now(), s.ledger)
}

// PaymentIntent returns a copy of a stored PaymentIntent.
func (s *Server) PaymentIntent(id string) (PaymentIntent, bool) {
	pi, ok := s.intents.get(id)
	if !ok {
		return PaymentIntent{}, false
	}
	return *pi, true
}

func (s *Server) now() time.Time { return s.cfg.Clock() }

// account authenticates r (Authorization: Bearer) and returns the key
// space it uses: its secret, or with a Stripe-Account header (Connect) the
// secret acting on that connected account, whose objects and keys are its
// own. It reports false for a missing or refused secret; a malformed
// Stripe-Account is refused by connected before.
func (s *Server) account(r *http.Request) (string, bool) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return "", false
	}
	if s.cfg.apiKey != "" && secret != s.cfg.apiKey {
		return "", false
	}
	if acct := r.Header.Get(connectHeader); acct != "" {
		return secret + " on " + acct, true
	}
	return secret, true
}
