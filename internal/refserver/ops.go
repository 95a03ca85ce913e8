package refserver

import (
	"net/http"
	"strings"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// opAttempt is a refund, capture or cancel request that passed
// authentication and validation, its key scoped to its merchant.
type opAttempt struct {
	t             opType
	merchant, key string
	req           opRequest
	fp            string
	fault         Fault
}

// handleOp runs one operation request through the life of a charge's:
// arrival (hook, counters, early faults), admission (auth, key, body),
// then execution under the key, with the same faults. Faults are drawn for
// the key, then for the operation's ID (InjectOrder with a refund_id
// scripts that refund's requests).
func (s *Server) handleOp(w http.ResponseWriter, r *http.Request, t opType) {
	body, bodyErr := readBody(r.Body, maxBody)
	key, keyErr := parseKey(r.Header.Values(s.cfg.KeyHeader), s.cfg.MaxKeyLength)
	opID, orderID := opIDOf(t, body)
	s.arriveOp(r, t, key, keyErr, opID, orderID, body)
	fault := s.faults.Draw(key, opID)
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
	w.Header().Set(s.cfg.KeyHeader, key)
	req, perr := parseOp(t, body)
	var fp string
	if perr == nil && bodyErr == nil {
		fp, bodyErr = fingerprint(r.Method, r.URL.Path, body)
	}
	if perr == nil && bodyErr != nil {
		perr = bodyError(bodyErr)
	}
	if perr != nil {
		s.reply(w, http.StatusBadRequest, perr.body()) // not stored: fixed and resent, the key works
		return
	}
	s.executeOp(w, opAttempt{t: t, merchant: merchant, key: key, req: req, fp: fp, fault: fault})
}

// arriveOp counts the request and calls the OnOpRequest hook.
func (s *Server) arriveOp(r *http.Request, t opType, key string, keyErr *apiError, opID, orderID string, body []byte) {
	statKey := key
	if keyErr != nil {
		statKey = ""
	}
	s.stats.arriveOp(statKey, opID)
	if s.cfg.OnOpRequest == nil {
		return
	}
	if keyErr != nil {
		key = strings.TrimSpace(r.Header.Get(s.cfg.KeyHeader))
	}
	s.cfg.OnOpRequest(OpRequestInfo{RequestInfo: RequestInfo{Request: r, Key: key, OrderID: orderID, Body: body},
		Op: t.name, OpID: opID})
}

// executeOp claims the key and acts on what the claim found.
func (s *Server) executeOp(w http.ResponseWriter, a opAttempt) {
	c := s.keys.Claim(a.merchant, a.key, a.fp, s.now())
	switch c.Kind {
	case faults.ClaimMismatch:
		s.reply(w, http.StatusUnprocessableEntity, (&apiError{Type: typeIdempotency,
			Code:    "idempotency_key_reused",
			Message: "this key was already used with a different request"}).body())
	case faults.ClaimInUse:
		s.inUse(w)
	case faults.ClaimReplay:
		s.sendOp(w, a.fault, c.Resp, true)
	default:
		if c.Reclaimed {
			s.stats.reclaim()
		}
		s.processOp(w, a, c.Token)
	}
}

// processOp executes an operation that holds the claim identified by token.
func (s *Server) processOp(w http.ResponseWriter, a opAttempt, token uint64) {
	if a.fault == Mid {
		s.stats.fault(Mid)
		s.drop(w)
		return
	}
	if s.cfg.Latency > 0 {
		time.Sleep(s.cfg.Latency)
	}
	if a.fault == Internal {
		s.internalError(w, a.merchant, a.key, token)
		return
	}
	resp, ok := s.commitOp(a, token)
	if !ok {
		s.inUse(w) // our lease ran out and another request took the key over
		return
	}
	s.sendOp(w, a.fault, resp, false)
}

// commitOp decides the operation and stores its answer with its record in
// the books, in one step: under the books' decision lock, so that two
// operations of one intent never both pass a check that only one of them
// may pass.
func (s *Server) commitOp(a opAttempt, token uint64) (resp faults.Stored, ok bool) {
	c, found := s.ledger.Find(a.merchant, a.req.OrderID)
	s.ledger.Decide(a.merchant, c.ID, func(b fakes.Balance, _ bool, record func(fakes.Op)) {
		var op *Op
		resp, op = s.decideOp(a, b, found)
		var effect func()
		if op != nil {
			effect = func() { record(*op) }
		}
		ok = s.keys.Commit(a.merchant, a.key, token, resp, effect)
	})
	return resp, ok
}

// sendOp answers with a stored response, unless a Post fault loses it.
func (s *Server) sendOp(w http.ResponseWriter, fault Fault, resp faults.Stored, replayed bool) {
	if fault == Post {
		s.stats.fault(Post)
		s.drop(w)
		return
	}
	if replayed {
		w.Header().Set(s.cfg.ReplayHeader, "true")
		s.stats.opReplay()
	}
	s.reply(w, resp.Status, resp.Body)
}

// handleOpLookup answers GET ?refund_id= (capture_id, cancel_id) with the
// merchant's operation (200, the body of its answer) or 404; with
// &idempotency_key=K, only an operation made under K. It reads the op
// ledger, so it works after the key's retention, and is never faulted.
func (s *Server) handleOpLookup(w http.ResponseWriter, r *http.Request, t opType) {
	s.stats.opLookup()
	merchant, ok := s.merchant(r)
	if !ok {
		s.unauthorized(w)
		return
	}
	id := r.URL.Query().Get(t.idField)
	if id == "" {
		writeJSON(w, http.StatusBadRequest, invalidParam(t.idField, t.idField+" is required").body())
		return
	}
	op, found := s.ops.find(t, merchant, id)
	if key := r.URL.Query().Get("idempotency_key"); found && key != "" && op.Key != key {
		found = false // made, but under another attempt's key
	}
	if !found {
		writeJSON(w, http.StatusNotFound, (&apiError{Type: typeInvalid, Code: "resource_missing",
			Param: t.idField, Message: "no such " + t.name}).body())
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(opResultOf(t, op)))
}
