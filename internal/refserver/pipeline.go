package refserver

import (
	"net/http"
	"strings"

	"github.com/idempay/idempay/internal/faults"
)

// arrival is a charge or operation request as it arrives, before any fault
// or processing: what the counters, the hooks and the fault scripts see.
type arrival struct {
	r       *http.Request
	body    []byte
	bodyErr error
	key     string    // unquoted; empty when keyErr
	keyErr  *apiError // the key header did not parse
	id      string    // order_id for a charge, the operation's ID for an operation
	orderID string
}

// admitted is an arrival that passed the early faults, authentication and
// the key header's checks: its key is scoped to its merchant.
type admitted struct {
	arrival
	merchant string
	fault    Fault
}

// arrive reads a request, counts it, calls hook with the raw key header
// when the key did not parse, draws its fault and applies Pre and
// Unavailable; then it authenticates and checks the key. It answers what
// ends the request there and reports whether it goes on.
func (s *Server) arrive(w http.ResponseWriter, r *http.Request, g *faults.Gate, ids func([]byte) (id, orderID string),
	hook func(a arrival, rawKey string)) (admitted, bool) {
	a := arrival{r: r}
	a.body, a.bodyErr = readBody(r.Body, maxBody)
	a.key, a.keyErr = parseKey(r.Header.Values(s.cfg.KeyHeader), s.cfg.MaxKeyLength)
	a.id, a.orderID = ids(a.body)
	raw := a.key
	if a.keyErr != nil {
		a.key, raw = "", strings.TrimSpace(r.Header.Get(s.cfg.KeyHeader))
	}
	fault, ok := g.Arrive(w, a.key, a.id, func() { hook(a, raw) })
	if !ok {
		return admitted{}, false
	}
	merchant, ok := s.merchant(r)
	if !ok {
		s.unauthorized(w, g, a.id)
		return admitted{}, false
	}
	if a.keyErr != nil {
		s.fail(w, g, a.id, http.StatusBadRequest, a.keyErr)
		return admitted{}, false
	}
	w.Header().Set(s.cfg.KeyHeader, a.key) // echoed, as Stripe does
	return admitted{arrival: a, merchant: merchant, fault: fault}, true
}

// execute claims the request's key (fingerprinted fp) and runs process
// holding it, or answers what the claim found: 422 for another request
// under the key, 409 while it is held, the stored answer replayed.
func (s *Server) execute(w http.ResponseWriter, g *faults.Gate, a admitted, fp string, process func(faults.Claimed)) {
	s.keys.Execute(a.merchant, a.key, fp, s.now(), faults.Outcomes{
		Mismatch: func() {
			s.fail(w, g, a.id, http.StatusUnprocessableEntity, &apiError{Type: faults.TypeIdempotency,
				Code: "idempotency_key_reused", Message: "this key was already used with a different request"})
		},
		InUse:  func() { s.inUse(w, g, a.id) },
		Replay: func(resp faults.Stored) { g.Reply(w, a.id, resp, true, a.fault) },
		Run: func(c faults.Claimed) {
			if c.Reclaimed {
				s.reclaims.Add(1)
			}
			process(c)
		},
	})
}

// crash applies the faults that strike while a request executes, before
// anything moves: Mid (the connection dropped, the claim left to its
// lease), Internal (a 500, the key released or, with StoreServerErrors, the
// 500 stored). It reports whether the request ended there.
func (s *Server) crash(w http.ResponseWriter, g *faults.Gate, a admitted, c faults.Claimed) bool {
	resp := faults.Stored{Status: http.StatusInternalServerError, Body: (&apiError{Type: faults.TypeAPI,
		Code: "internal_error", Message: "the request failed on the server"}).Body()}
	return g.Crash(w, a.id, a.fault, c, resp, "internal_error", s.cfg.StoreServerErrors, func() { s.inUse(w, g, a.id) })
}

func (s *Server) inUse(w http.ResponseWriter, g *faults.Gate, id string) {
	s.fail(w, g, id, http.StatusConflict, &apiError{Type: faults.TypeConflict, Code: "idempotency_key_in_use",
		Message: "a request with this key is in progress; retry later"})
}

// fail answers an error and counts it.
func (s *Server) fail(w http.ResponseWriter, g *faults.Gate, id string, status int, e *apiError) {
	g.Send(w, id, status, e.Body(), e.Code, false)
}
