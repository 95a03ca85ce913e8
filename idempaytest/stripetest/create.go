package stripetest

import (
	"net/http"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// maxKeyLen is Stripe's limit on an Idempotency-Key.
const maxKeyLen = 255

// handleCreate runs POST /v1/payment_intents through its life: arrival
// (hook, counters, early faults), admission (auth, parameters), then
// execution under the key.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	in, bodyErr := faults.ReadForm(r, fakes.IntentMetadataKey)
	g := s.charges
	fault, ok := g.Arrive(w, in.Key, in.Intent, s.hook(in, ""))
	if !ok {
		return
	}
	account, ok := s.admit(w, g, in.Intent, in, bodyErr)
	if !ok {
		return
	}
	params, verr := parseCreate(in.Form)
	if verr != nil {
		s.fail(w, g, in.Intent, http.StatusBadRequest, verr)
		return
	}
	s.execute(w, g, account, in, in.Intent, fault, func(c faults.Claimed) {
		if s.crash(w, g, in.Intent, fault, c) {
			return
		}
		now := s.now()
		pi, decline := newIntent(params, account, in.Key, now)
		resp := faults.Stored{Status: http.StatusOK, Body: mustJSON(pi)}
		switch {
		case decline != nil && s.cfg.storedDeclines:
			resp = internalError()
		case decline != nil:
			resp = faults.Stored{Status: http.StatusPaymentRequired, Body: decline.body()}
		}
		if !c.Commit(resp, func() { s.intents.add(pi, now, s.ledger) }) {
			// Our lease ran out and another request took the key over: it
			// charges, we must not.
			s.inUse(w, g, in.Intent)
			return
		}
		g.Reply(w, in.Intent, resp, false, fault)
	})
}

// hook is the WithHook call for a POST, op empty for a charge.
func (s *Server) hook(in faults.FormRequest, op string) func() {
	if s.cfg.hook == nil {
		return nil
	}
	return func() {
		s.cfg.hook(RequestInfo{Request: in.Request, Op: op, Key: in.Key, Intent: in.Intent,
			OpID: in.Form.Get(metadataPrefix + fakes.OpMetadataKey + "]"), Account: in.Request.Header.Get(connectHeader),
			Form: in.Form})
	}
}

// admit authenticates a POST and checks its body and key, answering what
// ends it; it returns the account whose key space the request uses.
func (s *Server) admit(w http.ResponseWriter, g *faults.Gate, id string, in faults.FormRequest, bodyErr error) (string, bool) {
	account, ok := s.account(in.Request)
	switch {
	case !ok:
		s.fail(w, g, id, http.StatusUnauthorized, &apiError{Type: faults.TypeInvalid, Message: "Invalid API Key provided."})
		return "", false
	case bodyErr != nil:
		s.fail(w, g, id, http.StatusBadRequest, invalidParam("", "The request body could not be parsed."))
		return "", false
	}
	if in.Key != "" {
		w.Header().Set("Idempotency-Key", in.Key)
	}
	if len(in.Key) > maxKeyLen {
		s.fail(w, g, id, http.StatusBadRequest, invalidParam("", "Idempotency-Key is longer than 255 characters."))
		return "", false
	}
	return account, true
}

// execute claims the request's key and runs process holding it, or answers
// what the claim found. A request without a key runs unprotected, as at
// Stripe. The fingerprint is the path and the canonical form.
func (s *Server) execute(w http.ResponseWriter, g *faults.Gate, account string, in faults.FormRequest, id string,
	fault fakes.Fault, process func(faults.Claimed)) {
	fp := in.Request.URL.Path + "?" + in.Form.Encode()
	s.keys.Execute(account, in.Key, fp, s.now(), faults.Outcomes{
		Mismatch: func() {
			s.fail(w, g, id, http.StatusBadRequest, &apiError{Type: faults.TypeIdempotency,
				Message: "Keys for idempotent requests can only be used with the same parameters they were first used with."})
		},
		InUse:  func() { s.inUse(w, g, id) },
		Replay: func(resp faults.Stored) { g.Reply(w, id, resp, true, fault) },
		Run:    process,
	})
}

// crash applies the faults that strike while a request executes, before
// anything moves: Mid drops the connection, the claim left to its lease;
// Internal stores a 500 under the key, as Stripe stores what failed once
// execution started. It reports whether the request ended.
func (s *Server) crash(w http.ResponseWriter, g *faults.Gate, id string, f fakes.Fault, c faults.Claimed) bool {
	return g.Crash(w, id, f, c, internalError(), "", true, func() { s.inUse(w, g, id) })
}

func internalError() faults.Stored {
	return faults.Stored{Status: http.StatusInternalServerError, Body: (&apiError{Type: faults.TypeAPI,
		Message: "An unknown error occurred while processing the request."}).body()}
}

func (s *Server) inUse(w http.ResponseWriter, g *faults.Gate, id string) {
	// As Stripe answers it (a recorded 409: type invalid_request_error, not
	// idempotency_error, which is the key used with other parameters).
	s.fail(w, g, id, http.StatusConflict, &apiError{Type: faults.TypeInvalid, Code: "idempotency_key_in_use",
		Message: "There is currently another in-progress request using this Idempotent Key (that probably means you " +
			"submitted twice, and the other request is still going through). Please try again later."})
}

// fail answers an error and counts it.
func (s *Server) fail(w http.ResponseWriter, g *faults.Gate, id string, status int, e *apiError) {
	g.Send(w, id, status, e.body(), e.Code, false)
}
