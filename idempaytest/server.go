package idempaytest

import (
	"cmp"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/idempay/idempay/internal/faults"
	"github.com/idempay/idempay/internal/refserver"
)

// ChargePath is the Server's charge endpoint: POST charges, GET with
// ?order_id= looks a charge up (idempay.OwnAPI's LookupPath).
const ChargePath = "/payments/charge"

// Token is a card token the Server charges. Any non-empty token does,
// except those starting with DeclineToken.
const Token = "tokn_test_idempaytest"

// DeclineToken makes the Server decline a charge (402 card_declined,
// decline code generic_decline): every token starting with it is declined.
// The decline is stored under the key, as a real provider does.
const DeclineToken = "tok_decline"

// Server is a fake payment provider speaking the own-API contract that
// idempay.OwnAPI speaks by default, served on a loopback port like an
// httptest.Server. It keeps real idempotency (keys claimed atomically,
// answers stored and replayed, leases) and a ledger of every charge it
// made, so a test can check that its code charged each intent once.
//
// All its methods are safe for concurrent use, also while requests are
// being served, and keep working after Close. Make one with NewServer:
// a zero Server has no server behind it, and its methods panic.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port", for
	// idempay.Config.BaseURL.
	URL string

	ts           *httptest.Server
	api          *refserver.Server
	secret       string
	replayHeader string

	mu      sync.Mutex
	checked map[testing.TB]bool // tests that check for duplicates at their end
}

// NewServer starts a Server. It has no faults, no authentication and a
// lease of DefaultLease unless options say otherwise. It panics if an
// option is refused, or if it cannot listen (as httptest.NewServer does).
// Call Close when done.
func NewServer(opts ...Option) *Server {
	o := serverOptions{lease: DefaultLease}
	faults.Apply("idempaytest", &o, opts)
	replay := cmp.Or(o.replayHeader, ReplayHeader)
	cfg := refserver.Config{
		Path:              ChargePath,
		RefundPath:        RefundPath,
		CapturePath:       CapturePath,
		CancelPath:        CancelPath,
		ReplayHeader:      replay,
		Lease:             o.lease,
		StoreServerErrors: o.storeErrors,
		Faults:            o.rates,
		Seed:              o.seed,
		Now:               o.now,
	}
	if o.secret != "" {
		cfg.Auth = map[string]string{o.secret: "merchant"}
	}
	api := refserver.New(cfg)
	ts := httptest.NewServer(api)
	return &Server{URL: ts.URL, ts: ts, api: api, secret: o.secret, replayHeader: replay}
}

// Client returns an *http.Client that sends to the server, for
// idempay.Config.HTTPClient. Close closes its idle connections.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Close stops the server and waits for the requests in progress. The
// counters and the ledger stay readable.
func (s *Server) Close() { s.ts.Close() }

// Fail scripts the faults of the next charge requests for intentID (the
// own-API body's order_id), or of the refund, capture or cancel requests
// for an operation ID (refund_id, capture_id, cancel_id), one fault per
// request; None lets one through.
// Calls add to the script. A scripted fault is spent by the request it was
// meant for even when it cannot apply (Mid on a replay), so a script
// always describes consecutive requests.
func (s *Server) Fail(intentID string, faults ...Fault) { s.api.InjectOrder(intentID, faults...) }

// FailNext scripts the faults of the next charge requests for any intent
// that has no script of its own from Fail.
func (s *Server) FailNext(faults ...Fault) { s.api.InjectNext(faults...) }

// SetFaultRates replaces the random fault rates set by WithFaultRates,
// for example with zero rates to let a chaos test settle what is still
// unknown. Scripted faults are not affected. It returns an error, and
// changes nothing, if a rate is outside [0, 1] or they sum to more than 1.
func (s *Server) SetFaultRates(r FaultRates) error { return s.api.SetFaults(r) }

// Charges returns how many times the server charged intentID: money that
// moved. Exactly once is what idempay promises.
func (s *Server) Charges(intentID string) int { return s.api.Ledger().Count(intentID) }

// TotalCharges returns how many charges the server made, for all intents.
func (s *Server) TotalCharges() int { return s.api.Ledger().Len() }

// Requests returns how many charge requests for intentID reached the
// server, faulted or not: the first and every retry.
func (s *Server) Requests(intentID string) int { return s.api.Stats().ByOrder[intentID] }

// TotalRequests returns how many charge requests reached the server.
func (s *Server) TotalRequests() int { return s.api.Stats().Requests }

// Keys returns the distinct idempotency keys sent for intentID, in the
// order first seen. The idempay client shows one key per attempt of the
// intent, however many retries it made: one, unless an attempt definitely
// failed (a decline, then another card) and the next began with a new key.
func (s *Server) Keys(intentID string) []string {
	return slices.Clone(s.api.Stats().KeysByOrder[intentID])
}
