package fakestripe

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// createReq is a charge request that passed authentication and validation.
type createReq struct {
	account string
	key     string
	intent  string
	params  createParams
	fp      string
	fault   fakes.Fault
}

// handleCreate runs POST /v1/payment_intents through its life: arrival
// (hook, counters, early faults), admission (auth, parameters), then
// execution under the key.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	in, bodyErr := faults.ReadForm(r, IntentMetadataKey)
	key, intent, form := in.Key, in.Intent, in.Form
	s.stats.arrive(key, intent)
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(in)
	}
	a := &answer{s: s, w: w, intent: intent}
	fault := s.faults.Draw(key, intent)
	switch fault {
	case fakes.Pre:
		a.drop(fault)
		return
	case fakes.Unavailable:
		s.stats.fault(fault)
		w.Header().Set("Retry-After", strconv.Itoa(int(s.cfg.RetryAfter/time.Second)))
		a.send(http.StatusServiceUnavailable, (&apiError{Type: typeAPI, Message: "Stripe is temporarily unavailable."}).body(), false)
		return
	}
	account, ok := s.account(r)
	if !ok {
		a.send(http.StatusUnauthorized, (&apiError{Type: typeInvalid, Message: "Invalid API Key provided."}).body(), false)
		return
	}
	if bodyErr != nil {
		a.send(http.StatusBadRequest, invalidParam("", "The request body could not be parsed.").body(), false)
		return
	}
	if key != "" {
		w.Header().Set("Idempotency-Key", key)
	}
	if len(key) > 255 {
		a.send(http.StatusBadRequest, invalidParam("", "Idempotency-Key is longer than 255 characters.").body(), false)
		return
	}
	params, verr := parseCreate(form)
	if verr != nil {
		a.send(http.StatusBadRequest, verr.body(), false)
		return
	}
	s.execute(a, createReq{account: account, key: key, intent: intent, params: params,
		fp: r.URL.Path + "?" + form.Encode(), fault: fault})
}

// execute claims the key and acts on what the claim found. A request
// without a key runs unprotected, as at Stripe.
func (s *Server) execute(a *answer, c createReq) {
	if c.key == "" {
		s.process(a, c, func(resp faults.Stored, effect func()) bool { effect(); return true })
		return
	}
	cl := s.keys.Claim(c.account, c.key, c.fp, s.now())
	switch cl.Kind {
	case faults.ClaimMismatch:
		a.send(http.StatusBadRequest, (&apiError{Type: typeIdempotency,
			Message: "Keys for idempotent requests can only be used with the same parameters they were first used with."}).body(), false)
	case faults.ClaimInUse:
		a.inUse()
	case faults.ClaimReplay:
		a.reply(cl.Resp, true, c.fault)
	default:
		s.process(a, c, func(resp faults.Stored, effect func()) bool {
			return s.keys.Commit(c.account, c.key, cl.Token, resp, effect)
		})
	}
}

// process executes a request holding its key's claim; commit stores the
// answer and the effect together, or reports that the claim was lost.
func (s *Server) process(a *answer, c createReq, commit func(faults.Stored, func()) bool) {
	switch c.fault {
	case fakes.Mid: // the crash: nothing charged, nothing stored, the claim left to its lease
		a.drop(c.fault)
		return
	case fakes.Internal:
		s.stats.fault(c.fault)
		resp := faults.Stored{Status: http.StatusInternalServerError, Body: (&apiError{Type: typeAPI,
			Message: "An unknown error occurred while processing the request."}).body()}
		if !commit(resp, func() {}) {
			a.inUse()
			return
		}
		a.send(resp.Status, resp.Body, false)
		return
	}
	now := s.now()
	pi, decline := newIntent(c.params, c.account, c.key, now)
	resp := faults.Stored{Status: http.StatusOK, Body: mustJSON(pi)}
	switch {
	case decline != nil && s.cfg.StoreFailureOnDecline:
		resp = faults.Stored{Status: http.StatusInternalServerError, Body: (&apiError{Type: typeAPI,
			Message: "An unknown error occurred while processing the request."}).body()}
	case decline != nil:
		resp = faults.Stored{Status: http.StatusPaymentRequired, Body: decline.body()}
	}
	if !commit(resp, func() { s.intents.add(pi, now, s.ledger) }) {
		// Our lease ran out and another request took the key over: it
		// charges, we must not.
		a.inUse()
		return
	}
	a.reply(resp, false, c.fault)
}

// account authenticates r and returns the key space it uses.
func (s *Server) account(r *http.Request) (string, bool) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return "", false
	}
	if s.cfg.APIKey != "" && secret != s.cfg.APIKey {
		return "", false
	}
	return secret, true
}

// answer writes one charge answer and counts it.
type answer struct {
	s      *Server
	w      http.ResponseWriter
	intent string
}

func (a *answer) drop(f fakes.Fault) {
	a.s.stats.fault(f)
	faults.Drop(a.w, a.s.cfg.DropWithReset)
}

func (a *answer) inUse() {
	a.send(http.StatusConflict, (&apiError{Type: typeIdempotency, Code: "idempotency_key_in_use",
		Message: "There is currently another in-progress request using this Idempotent Key."}).body(), false)
}

// reply sends a stored answer, unless a Post fault loses it.
func (a *answer) reply(resp faults.Stored, replayed bool, f fakes.Fault) {
	if f == fakes.Post {
		a.drop(f)
		return
	}
	a.send(resp.Status, resp.Body, replayed)
}

func (a *answer) send(status int, body []byte, replayed bool) {
	h := a.w.Header()
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	if a.s.cfg.ShouldRetry {
		switch status {
		case http.StatusConflict, http.StatusServiceUnavailable:
			h.Set("Stripe-Should-Retry", "true")
		case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusInternalServerError:
			h.Set("Stripe-Should-Retry", "false")
		}
	}
	a.s.stats.answered(a.intent, status, replayed)
	writeJSON(a.w, status, body)
}
