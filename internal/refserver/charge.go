package refserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay/internal/faults"
)

// maxBody bounds a charge body; the contract's bodies are tiny.
const maxBody = 1 << 20

// DeclineTokenPrefix starts every card token that the server declines.
const DeclineTokenPrefix = "tok_decline"

// attempt is a charge request that passed authentication and validation.
// Its key is scoped to its merchant, so that two merchants sending the
// same key never see each other's responses.
type attempt struct {
	merchant, key string
	req           chargeRequest
	fp            string
	fault         Fault
}

// handleCharge runs one charge request through its life: arrival (hooks,
// counters, early faults), admission (auth, key, body), then execution
// under the key.
func (s *Server) handleCharge(w http.ResponseWriter, r *http.Request) {
	body, bodyErr := readBody(r.Body, maxBody)
	key, keyErr := parseKey(r.Header.Values(s.cfg.KeyHeader), s.cfg.MaxKeyLength)
	orderID := orderIDOf(body)
	s.arrive(r, key, keyErr, orderID, body)
	fault := s.faults.Draw(key, orderID)
	if s.failEarly(w, fault) {
		return
	}
	merchant, ok := s.merchant(r)
	if !ok {
		s.stats.status(http.StatusUnauthorized)
		s.unauthorized(w)
		return
	}
	if keyErr != nil {
		s.reply(w, http.StatusBadRequest, keyErr.body())
		return
	}
	w.Header().Set(s.cfg.KeyHeader, key) // echoed, as Stripe does
	req, fp, perr := admitBody(r, body, bodyErr)
	if perr != nil {
		// Not stored under the key: fixing the request and resending it
		// with the same key must work.
		s.reply(w, http.StatusBadRequest, perr.body())
		return
	}
	s.execute(w, attempt{merchant: merchant, key: key, req: req, fp: fp, fault: fault})
}

// arrive counts the request and calls the OnRequest hook.
func (s *Server) arrive(r *http.Request, key string, keyErr *apiError, orderID string, body []byte) {
	statKey := key
	if keyErr != nil {
		statKey = ""
	}
	s.stats.arrive(statKey, orderID)
	if s.cfg.OnRequest == nil {
		return
	}
	if keyErr != nil {
		key = strings.TrimSpace(r.Header.Get(s.cfg.KeyHeader))
	}
	s.cfg.OnRequest(RequestInfo{Request: r, Key: key, OrderID: orderID, Body: body})
}

// failEarly applies the faults that strike before anything is claimed and
// reports whether the request ended there.
func (s *Server) failEarly(w http.ResponseWriter, f Fault) bool {
	switch f {
	case Pre:
		s.stats.fault(Pre)
		s.drop(w)
		return true
	case Unavailable:
		s.stats.fault(Unavailable)
		w.Header().Set("Retry-After", strconv.Itoa(int(s.cfg.RetryAfter/time.Second)))
		s.reply(w, http.StatusServiceUnavailable, (&apiError{Type: typeAPI,
			Code: "service_unavailable", Message: "try again later"}).body())
		return true
	}
	return false
}

// admitBody validates the body and fingerprints the request.
func admitBody(r *http.Request, body []byte, bodyErr error) (chargeRequest, string, *apiError) {
	if bodyErr != nil {
		return chargeRequest{}, "", &apiError{Type: typeInvalid, Code: "parameter_invalid",
			Message: "the body could not be read or is too large"}
	}
	req, perr := parseCharge(body)
	if perr != nil {
		return req, "", perr
	}
	fp, err := fingerprint(r.Method, r.URL.Path, body)
	if err != nil { // unreachable after parseCharge accepted the body
		return req, "", bodyError(err)
	}
	return req, fp, nil
}

// execute claims the key and acts on what the claim found.
func (s *Server) execute(w http.ResponseWriter, a attempt) {
	c := s.keys.Claim(a.merchant, a.key, a.fp, s.now())
	switch c.Kind {
	case faults.ClaimMismatch:
		s.reply(w, http.StatusUnprocessableEntity, (&apiError{Type: typeIdempotency,
			Code:    "idempotency_key_reused",
			Message: "this key was already used with a different request"}).body())
	case faults.ClaimInUse:
		s.inUse(w)
	case faults.ClaimReplay:
		s.send(w, a.fault, c.Resp, true)
	default:
		if c.Reclaimed {
			s.stats.reclaim()
		}
		s.process(w, a, c.Token)
	}
}

func (s *Server) inUse(w http.ResponseWriter) {
	s.reply(w, http.StatusConflict, (&apiError{Type: typeConflict, Code: "idempotency_key_in_use",
		Message: "a request with this key is in progress; retry later"}).body())
}

// process executes a request that holds the claim identified by token.
func (s *Server) process(w http.ResponseWriter, a attempt, token uint64) {
	if a.fault == Mid {
		// The crash: no charge, no release. Only the lease frees the key.
		s.stats.fault(Mid)
		s.drop(w)
		return
	}
	if s.cfg.Latency > 0 {
		time.Sleep(s.cfg.Latency) // not cut short by the client leaving: servers carry on
	}
	if a.fault == Internal {
		s.internalError(w, a.merchant, a.key, token)
		return
	}
	resp, charge := s.perform(a)
	var record func() // in the commit's critical section: no charge without its answer
	if charge != nil {
		record = func() { s.ledger.Add(*charge) }
	}
	if !s.keys.Commit(a.merchant, a.key, token, resp, record) {
		// Our lease ran out and another request took the key over; it
		// charges, we must not. The client retries and gets its answer.
		s.inUse(w)
		return
	}
	s.send(w, a.fault, resp, false)
}

// perform decides the outcome of a charge: a decline or a new charge.
func (s *Server) perform(a attempt) (faults.Stored, *Charge) {
	if strings.HasPrefix(a.req.OmiseToken, DeclineTokenPrefix) {
		return faults.Stored{Status: http.StatusPaymentRequired, Body: (&apiError{Type: typeCard, Code: "card_declined",
			DeclineCode: "generic_decline", Message: "the card was declined"}).body()}, nil
	}
	amount, currency := a.req.money()
	c := &Charge{
		ID:       newID("ch_"),
		Merchant: a.merchant,
		Intent:   a.req.OrderID,
		Key:      a.key,
		Amount:   amount,
		Currency: currency,
		Time:     s.now(),
		// Sent with "capture": false, the charge is an authorisation.
		Authorized: a.req.Capture != nil && !*a.req.Capture,
	}
	res := resultOf(*c)
	if c.Authorized {
		res.Status = "authorized"
	}
	return faults.Stored{Status: http.StatusCreated, Body: mustJSON(res)}, c
}

// internalError fails the request with a 500 before charging, then either
// stores the 500 under the key (Stripe) or forgets the key (the article).
func (s *Server) internalError(w http.ResponseWriter, merchant, key string, token uint64) {
	s.stats.fault(Internal)
	resp := faults.Stored{Status: http.StatusInternalServerError, Body: (&apiError{Type: typeAPI, Code: "internal_error",
		Message: "the request failed on the server"}).body()}
	if !s.cfg.StoreServerErrors {
		s.keys.Release(merchant, key, token)
	} else if !s.keys.Commit(merchant, key, token, resp, nil) {
		s.inUse(w)
		return
	}
	s.reply(w, resp.Status, resp.Body)
}

// send answers with a stored response, unless a Post fault loses it.
func (s *Server) send(w http.ResponseWriter, fault Fault, resp faults.Stored, replayed bool) {
	if fault == Post {
		s.stats.fault(Post)
		s.drop(w)
		return
	}
	if replayed {
		w.Header().Set(s.cfg.ReplayHeader, "true")
		s.stats.replay()
	}
	s.reply(w, resp.Status, resp.Body)
}

// drop closes the client's connection without answering, as a crashed
// server or a cut network would (with a TCP reset under
// Config.DropWithReset). It must be called before anything is written to w.
func (s *Server) drop(w http.ResponseWriter) { faults.Drop(w, s.cfg.DropWithReset) }

// reply writes a charge response and counts its status.
func (s *Server) reply(w http.ResponseWriter, status int, body []byte) {
	s.stats.status(status)
	writeJSON(w, status, body)
}
