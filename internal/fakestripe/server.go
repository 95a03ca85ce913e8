package fakestripe

import (
	"net/http"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// IntentMetadataKey is the metadata key under which idempay's Stripe
// adapter tags each PaymentIntent with its intent ID; the fake reads it to
// tie requests, stats and ledger entries to intents.
const IntentMetadataKey = "idempay_intent"

// Server is the fake Stripe API, an http.Handler: mount it on
// httptest.NewServer, or use Start. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	ledger  *fakes.Ledger
	faults  *faults.Injector
	keys    *faults.KeyTable
	intents *intentStore
	stats   *counters
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
		intents: newIntentStore(),
		stats:   newCounters(),
	}
}

// Ledger returns the record of real charges.
func (s *Server) Ledger() *fakes.Ledger { return s.ledger }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// SetFaults replaces the random fault rates; scripts are not affected.
func (s *Server) SetFaults(r fakes.Rates) error { return s.faults.SetRates(r) }

// InjectKey scripts the faults of the next requests carrying key.
func (s *Server) InjectKey(key string, f ...fakes.Fault) { s.faults.ScriptKey(key, f...) }

// InjectIntent scripts the faults of the next requests of an idempay intent.
func (s *Server) InjectIntent(intent string, f ...fakes.Fault) { s.faults.ScriptIntent(intent, f...) }

// InjectNext scripts the faults of the next charge requests.
func (s *Server) InjectNext(f ...fakes.Fault) { s.faults.ScriptNext(f...) }

// ServeHTTP routes the three endpoints the adapter uses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Request-Id", newID("req_"))
	if v := r.Header.Get("Stripe-Version"); v != "" {
		w.Header().Set("Stripe-Version", v)
	}
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	const base = "/v1/payment_intents"
	switch {
	case r.URL.Path == base && r.Method == http.MethodPost:
		s.handleCreate(w, r)
	case r.URL.Path == base+"/search" && r.Method == http.MethodGet:
		s.handleSearch(w, r)
	case strings.HasPrefix(r.URL.Path, base+"/") && r.Method == http.MethodGet:
		s.handleRetrieve(w, r, strings.TrimPrefix(r.URL.Path, base+"/"))
	default:
		writeError(w, http.StatusNotFound, &apiError{Type: typeInvalid,
			Message: "Unrecognized request URL (" + r.Method + ": " + r.URL.Path + ")"})
	}
}

// Complete finishes a PaymentIntent waiting in requires_action or
// processing, as the customer completing 3-D Secure (or the bank settling)
// would: it succeeds, or fails back to requires_payment_method with an
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
	return pi.clone(), true
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
