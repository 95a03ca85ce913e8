package fakeomise

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the fake Omise API, an http.Handler: mount it on
// httptest.NewServer, or use Start. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	ledger  *fakes.Ledger
	faults  *faults.Injector
	keys    *faults.KeyTable
	charges *chargeStore
	stats   *counters
	lookups *lookupFaults
	// processed counts charge requests that reached processing, for
	// Config.Neighbours.
	processed atomic.Int64
}

// New returns a Server configured by cfg. It panics if cfg.Validate fails,
// as a fixture built wrong should stop the test at once.
func New(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	return &Server{
		cfg:     cfg,
		ledger:  &fakes.Ledger{},
		faults:  faults.NewInjector(cfg.Faults, cfg.Seed),
		keys:    faults.NewKeyTable(cfg.Lease, cfg.Retention),
		charges: newChargeStore(),
		stats:   newCounters(),
		lookups: newLookupFaults(cfg.LookupFailures, cfg.Seed),
	}
}

// Ledger returns the record of real charges.
func (s *Server) Ledger() *fakes.Ledger { return s.ledger }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// SetFaults replaces the random fault rates; scripts are not affected.
func (s *Server) SetFaults(r fakes.Rates) error { return s.faults.SetRates(r) }

// SetLookupFailures replaces the probability that a lookup answers 503.
func (s *Server) SetLookupFailures(p float64) error { return s.lookups.set(p) }

// InjectKey scripts the faults of the next requests carrying key.
func (s *Server) InjectKey(key string, f ...fakes.Fault) { s.faults.ScriptKey(key, f...) }

// InjectIntent scripts the faults of the next requests of an idempay intent.
func (s *Server) InjectIntent(intent string, f ...fakes.Fault) { s.faults.ScriptIntent(intent, f...) }

// InjectNext scripts the faults of the next charge requests.
func (s *Server) InjectNext(f ...fakes.Fault) { s.faults.ScriptNext(f...) }

// Complete finishes a pending charge (3-D Secure or an offsite source) as
// the customer would: it succeeds (or is authorised, with capture false)
// or fails with payment_rejected. It reports whether such a charge was
// found.
func (s *Server) Complete(id string, succeed bool) bool {
	return s.charges.complete(id, succeed, s.ledger)
}

// Charge returns a copy of a stored charge.
func (s *Server) Charge(id string) (Charge, bool) { return s.charges.get(id) }

// ServeHTTP routes the three endpoints the adapter uses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	switch {
	case r.URL.Path == "/charges" && r.Method == http.MethodPost:
		s.handleCreate(w, r)
	case r.URL.Path == "/charges" && r.Method == http.MethodGet:
		s.handleList(w, r)
	case strings.HasPrefix(r.URL.Path, "/charges/") && r.Method == http.MethodGet:
		s.handleRetrieve(w, r, strings.TrimPrefix(r.URL.Path, "/charges/"))
	default:
		writeError(w, "not_found", "path "+r.URL.Path+" was not found")
	}
}

// account authenticates r (Basic, secret key as user, empty password) and
// returns the key space it uses.
func (s *Server) account(r *http.Request) (string, bool) {
	user, pass, ok := r.BasicAuth()
	if !ok || user == "" || pass != "" || (s.cfg.SecretKey != "" && user != s.cfg.SecretKey) {
		return "", false
	}
	return user, true
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// Start serves a new Server on a loopback port and returns it with its
// base URL and a function that stops it, letting handlers in progress
// finish so that the ledger is final.
func Start(cfg Config) (*Server, string, func()) {
	s := New(cfg)
	url, stop := faults.Serve(s)
	return s, url, stop
}
