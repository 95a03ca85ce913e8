package omisetest

import (
	"net/http"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// handleCreate runs POST /charges through its life: arrival (hook,
// counters, early faults), admission (auth, parameters), then execution,
// under the key when keys are honoured.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	in, bodyErr := faults.ReadForm(r, fakes.IntentMetadataKey)
	g, id := s.charges, in.Intent
	fault, ok := g.Arrive(w, in.Key, id, s.hook(in, "", ""))
	if !ok {
		return
	}
	account, ok := s.admit(w, g, id, in, bodyErr)
	if !ok {
		return
	}
	p, code, msg := parseCreate(in.Form)
	if code != "" {
		s.fail(w, g, id, code, msg)
		return
	}
	s.execute(w, g, account, in, id, fault, func(c faults.Claimed) { s.process(w, account, in.Key, p, fault, c) })
}

// process executes a charge holding its key's claim (or unprotected).
func (s *Server) process(w http.ResponseWriter, account, key string, p createParams, fault fakes.Fault, c faults.Claimed) {
	g, id := s.charges, p.metadata[fakes.IntentMetadataKey]
	what := strings.ToLower(p.card + p.source)
	switch {
	case s.crash(w, g, id, fault, c):
		return
	case strings.Contains(what, "fraud"):
		c.Release()
		s.fail(w, g, id, "failed_fraud_check", "the card was marked as fraudulent")
		return
	case strings.Contains(what, "missing"):
		c.Release()
		s.fail(w, g, id, "not_found", "token "+p.card+p.source+" was not found")
		return
	}
	s.neighbour(account)
	single := strings.HasPrefix(p.card, "tokn_") || strings.HasPrefix(p.source, "src_")
	if single && !s.store.consume(account, p.card+p.source) {
		c.Release()
		if p.source != "" {
			s.fail(w, g, id, "invalid_charge", "source was already used")
		} else {
			s.fail(w, g, id, "used_token", "token was already used")
		}
		return
	}
	ch := newCharge(p, account, key, s.now())
	resp := faults.Stored{Status: http.StatusOK, Body: mustJSON(ch)}
	if !c.Commit(resp, func() { s.store.add(ch, s.ledger) }) {
		// Our claim was taken over: the other request charges, we must not.
		if single {
			s.store.unconsume(account, p.card+p.source)
		}
		s.inUse(w, g, id)
		return
	}
	g.Reply(w, id, resp, false, fault)
}

// neighbour makes another integration's charge on the account when
// WithNeighbors says one is due.
func (s *Server) neighbour(account string) {
	if s.cfg.neighbours <= 0 {
		return
	}
	if n := int(s.processed.Add(1)); n%s.cfg.neighbours == 0 {
		s.store.add(neighbourCharge(account, n, s.now()), nil) // another integration's: not in these books
	}
}

// hook is the WithHook call for a POST; op and charge are empty for a
// charge.
func (s *Server) hook(in faults.FormRequest, op, charge string) func() {
	if s.cfg.hook == nil {
		return nil
	}
	return func() {
		s.cfg.hook(RequestInfo{Request: in.Request, Op: op, Charge: charge, Key: in.Key, Intent: in.Intent,
			OpID: in.Form.Get("metadata[" + fakes.OpMetadataKey + "]"), Form: in.Form})
	}
}

// admit authenticates a POST and checks its body, answering what ends it;
// it returns the account whose key space the request uses.
func (s *Server) admit(w http.ResponseWriter, g *faults.Gate, id string, in faults.FormRequest, bodyErr error) (string, bool) {
	account, ok := s.account(in.Request)
	switch {
	case !ok:
		s.fail(w, g, id, "authentication_failure", "authentication failed")
		return "", false
	case bodyErr != nil:
		s.fail(w, g, id, "bad_request", "the request body could not be parsed")
		return "", false
	}
	return account, true
}

// execute runs process under the request's key when keys are honoured
// (another body under it: 422 idempotency_key_reused; while held: 409
// conflict; a stored answer replayed without any replay header), and
// unprotected otherwise.
func (s *Server) execute(w http.ResponseWriter, g *faults.Gate, account string, in faults.FormRequest, id string,
	fault fakes.Fault, process func(faults.Claimed)) {
	key := in.Key
	if !s.cfg.honourKeys {
		key = ""
	}
	s.keys.Execute(account, key, in.Request.URL.Path+"?"+in.Form.Encode(), s.now(), faults.Outcomes{
		Mismatch: func() {
			s.fail(w, g, id, "idempotency_key_reused", "the idempotency key was used with other parameters")
		},
		InUse:  func() { s.inUse(w, g, id) },
		Replay: func(resp faults.Stored) { g.Reply(w, id, resp, false, fault) }, // Omise documents no replay header
		Run:    process,
	})
}

// crash applies the faults that strike while a request executes, before
// anything moves: Mid drops the connection (an honoured key's claim left
// to its lease); Internal answers 500 backend_error and releases the key:
// nothing is stored. It reports whether the request ended.
func (s *Server) crash(w http.ResponseWriter, g *faults.Gate, id string, f fakes.Fault, c faults.Claimed) bool {
	status, body := errorBody("backend_error", "an internal error occurred")
	return g.Crash(w, id, f, c, faults.Stored{Status: status, Body: body}, "backend_error", false, func() { s.inUse(w, g, id) })
}

func (s *Server) inUse(w http.ResponseWriter, g *faults.Gate, id string) {
	s.fail(w, g, id, "conflict", "a request with this idempotency key is in progress")
}

// fail answers Omise's error for code and counts it.
func (s *Server) fail(w http.ResponseWriter, g *faults.Gate, id, code, message string) {
	status, body := errorBody(code, message)
	g.Send(w, id, status, body, code, false)
}
