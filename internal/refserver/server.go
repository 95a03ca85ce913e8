package refserver

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// Server is the reference payment API. It is an http.Handler: mount it on
// httptest.NewServer, or use Start. All its methods are safe for
// concurrent use.
type Server struct {
	cfg     Config
	ledger  *Ledger
	ops     *OpLedger
	keys    *faults.KeyTable
	faults  *fakes.Script // one script and one draw for charges and operations
	charges *faults.Gate  // charge requests
	opGate  *faults.Gate  // refund, capture and cancel requests

	reclaims, lookups, opLookups atomic.Int64
}

// New returns a Server configured by cfg, with defaults for zero fields.
// It panics if cfg.Validate reports an error, as a test fixture built
// wrong should stop the test at once.
func New(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	ledger := &Ledger{}
	s := &Server{
		cfg:    cfg,
		ledger: ledger,
		ops:    &OpLedger{ledger},
		keys:   faults.NewKeyTable(cfg.Lease, cfg.Retention),
		faults: fakes.NewScript(cfg.Faults, cfg.Seed),
	}
	s.charges, s.opGate = s.gate(), s.gate()
	return s
}

// gate is how a request starts and ends here: the one injector, its own
// counts, the server's replay header and 503.
func (s *Server) gate() *faults.Gate {
	return &faults.Gate{Faults: s.faults, Traffic: faults.NewCounter(), Reset: s.cfg.DropWithReset,
		RetryAfter: s.cfg.RetryAfter,
		Unavailable: func(w http.ResponseWriter) {
			writeJSON(w, http.StatusServiceUnavailable, (&apiError{Type: faults.TypeAPI, Code: "service_unavailable",
				Message: "try again later"}).Body())
		},
		Mark: func(h http.Header, _ int, replayed bool) {
			if replayed {
				h.Set(s.cfg.ReplayHeader, "true")
			}
		},
	}
}

// Ledger returns the server's books: charges, refunds, captures, cancels.
func (s *Server) Ledger() *Ledger { return s.ledger }

// Ops reads the refunds, captures and cancels in the server's books.
func (s *Server) Ops() *OpLedger { return s.ops }

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats { return s.snapshot() }

// SetFaults replaces the random fault rates, for example to let a chaos
// test settle with faults turned off. Scripted faults are not affected.
func (s *Server) SetFaults(r FaultRates) error { return s.faults.SetFaultRates(r) }

// InjectKey scripts the faults of the next requests carrying key, one
// per request (NoFault lets one through). Key scripts take precedence
// over order scripts, which take precedence over InjectNext.
func (s *Server) InjectKey(key string, faults ...Fault) { s.faults.FailKey(key, faults...) }

// InjectOrder scripts the faults of the next requests for orderID, for
// tests that know the order but not the key the client chose.
func (s *Server) InjectOrder(orderID string, faults ...Fault) {
	s.faults.Fail(orderID, faults...)
}

// InjectNext scripts the faults of the next charge requests, whatever
// their key or order.
func (s *Server) InjectNext(faults ...Fault) { s.faults.FailNext(faults...) }

// ServeHTTP serves charges (POST) and lookups (GET) on Config.Path, and
// refunds, captures and cancels and their lookups on their own paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fakes.StampDate(w.Header(), s.now())
	w.Header().Set("Request-Id", newID("req_"))
	if s.cfg.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	post, get := s.handlers(r.URL.Path)
	if post == nil {
		writeJSON(w, http.StatusNotFound, (&apiError{Type: faults.TypeInvalid, Code: "resource_missing",
			Message: "no such endpoint"}).Body())
		return
	}
	switch r.Method {
	case http.MethodPost:
		post(w, r)
	case http.MethodGet:
		get(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeJSON(w, http.StatusMethodNotAllowed, (&apiError{Type: faults.TypeInvalid,
			Code: "method_not_allowed"}).Body())
	}
}

// handlers returns the POST and GET handlers of path, or nils.
func (s *Server) handlers(path string) (post, get http.HandlerFunc) {
	switch path {
	case s.cfg.Path:
		return s.handleCharge, s.handleLookup
	case s.cfg.RefundPath:
		return s.opHandlers(opRefund)
	case s.cfg.CapturePath:
		return s.opHandlers(opCapture)
	case s.cfg.CancelPath:
		return s.opHandlers(opCancel)
	}
	return nil, nil
}

func (s *Server) opHandlers(t opType) (post, get http.HandlerFunc) {
	return func(w http.ResponseWriter, r *http.Request) { s.handleOp(w, r, t) },
		func(w http.ResponseWriter, r *http.Request) { s.handleOpLookup(w, r, t) }
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// Start serves a new Server on a loopback port. It returns the server,
// its base URL ("http://127.0.0.1:port") and a function that stops it and
// waits for its handlers. It panics if it cannot listen, as
// httptest.NewServer does.
func Start(cfg Config) (*Server, string, func()) {
	s := New(cfg)
	url, stop := faults.Serve(s)
	return s, url, stop
}
