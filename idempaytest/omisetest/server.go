package omisetest

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the fake Omise API on a loopback port, like an
// httptest.Server: its URL, Start, Client and Close are the embedded
// fakes.Loopback's. Its faults are scripted with the embedded fakes.Script's
// Fail, FailKey, FailNext and SetFaultRates; here Fail's id is an intent
// (metadata[idempay_intent]) for charge requests, an operation ID
// (metadata[idempay_op]) for refunds, or a charge (chrg_...) for any
// operation on it, which is how a capture or a reverse, carrying no
// metadata, is scripted; FailKey scripts by Idempotency-Key, honoured or
// not. It is also an http.Handler, for tests that serve it themselves. Its
// methods are safe for concurrent use, also while requests are served, and
// its books and counters stay readable after Close. Make one with NewServer
// or NewUnstartedServer; the zero Server is not usable.
type Server struct {
	*fakes.Loopback
	*fakes.Script

	cfg     config
	ledger  *fakes.Ledger
	keys    *faults.KeyTable
	charges *faults.Gate // POST /charges
	ops     *faults.Gate // POST /charges/{id}/refunds, /capture, /reverse
	store   *chargeStore
	lookups *lookupFaults

	// processed counts charge requests that reached processing, for
	// WithNeighbors.
	processed                     atomic.Int64
	retrievals, lists, refundGets atomic.Int64
}

// NewServer starts a Server. Without options it accepts any secret key,
// ignores Idempotency-Key (as Omise documents none) and injects no faults.
// It panics if an option is refused or it cannot listen, as
// httptest.NewServer does. Call Close when done, or give WithTest.
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
	faults.Apply("omisetest", &c, opts)
	c.Settings = c.WithDefaults()
	s := &Server{Script: fakes.NewScript(c.Faults, c.Seed), cfg: c, ledger: &fakes.Ledger{},
		keys: faults.NewKeyTable(c.Lease, c.Retention), store: newChargeStore(),
		lookups: newLookupFaults(c.lookupFailures, c.Seed)}
	s.Loopback = fakes.NewLoopback(s)
	s.charges, s.ops = s.gate(), s.gate()
	c.Check(s.Close, s.CheckMoney)
	return s
}

// gate is how a POST starts and ends here: the one fault injector, its own
// counts, Omise's 503 and content type; no replay mark.
func (s *Server) gate() *faults.Gate {
	g := s.cfg.Gate(s.Script)
	g.Unavailable = func(w http.ResponseWriter) {
		status, body := errorBody("service_unavailable", "the service is temporarily unavailable")
		writeJSON(w, status, body)
	}
	g.Write = writeJSON
	return g
}

// Ledger returns the books: every charge (successful, or authorised and
// pending) tagged with an intent, and every refund, capture and reverse.
func (s *Server) Ledger() *fakes.Ledger { return s.ledger }

// CheckMoney returns a *fakes.MoneyError naming every way money moved wrong
// (an intent charged twice, a refund made twice, refunds beyond the
// charge, ...), or nil. Call it when the test's requests are done.
func (s *Server) CheckMoney() error { return s.ledger.Check() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{Traffic: s.charges.Traffic.Snapshot(), Ops: s.ops.Traffic.Snapshot(), Retrievals: int(s.retrievals.Load()),
		Lists: int(s.lists.Load()), RefundLookups: int(s.refundGets.Load())}
}

// SetLookupFailures replaces the probability that a lookup answers 503.
func (s *Server) SetLookupFailures(p float64) error { return s.lookups.set(p) }

// Complete finishes a pending charge (3-D Secure or an offsite source) as
// the customer would: it succeeds (or is authorised, with capture false)
// or fails with payment_rejected. It reports whether such a charge was
// found.
func (s *Server) Complete(id string, succeed bool) bool {
	return s.store.complete(id, succeed, s.ledger)
}

// Charge returns a copy of a stored charge.
func (s *Server) Charge(id string) (Charge, bool) { return s.store.get(id) }

// ServeHTTP routes the endpoints the fake serves (see README.md).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fakes.StampDate(w.Header(), s.now())
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	rest, under := strings.CutPrefix(r.URL.Path, "/charges/")
	parts := strings.Split(rest, "/")
	id := parts[0]
	switch {
	case r.URL.Path == "/charges" && post:
		s.handleCreate(w, r)
	case r.URL.Path == "/charges" && get:
		s.handleList(w, r)
	case under && len(parts) == 1 && get:
		s.handleRetrieve(w, r, id)
	case under && len(parts) == 2 && parts[1] == "refunds" && post:
		s.operate(w, r, fakes.OpRefund, id)
	case under && len(parts) == 2 && parts[1] == "refunds" && get:
		s.handleListRefunds(w, r, id)
	case under && len(parts) == 3 && parts[1] == "refunds" && get:
		s.handleRetrieveRefund(w, r, id, parts[2])
	case under && len(parts) == 2 && parts[1] == "capture" && post:
		s.operate(w, r, fakes.OpCapture, id)
	case under && len(parts) == 2 && parts[1] == "reverse" && post:
		s.operate(w, r, fakes.OpCancel, id)
	default:
		writeError(w, "not_found", "path "+r.URL.Path+" was not found")
	}
}

// account authenticates r (Basic, secret key as user, empty password) and
// returns the key space it uses.
func (s *Server) account(r *http.Request) (string, bool) {
	user, pass, ok := r.BasicAuth()
	if !ok || user == "" || pass != "" || (s.cfg.secretKey != "" && user != s.cfg.secretKey) {
		return "", false
	}
	return user, true
}

func (s *Server) now() time.Time { return s.cfg.Clock() }
