package refserver

import (
	"net/http"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// handleOp runs one operation request through the life of a charge's:
// arrival (hook, counters, early faults), admission (auth, key, body),
// then execution under the key, with the same faults. Faults are drawn for
// the key, then for the operation's ID (InjectOrder with a refund_id
// scripts that refund's requests).
func (s *Server) handleOp(w http.ResponseWriter, r *http.Request, t opType) {
	a, ok := s.arrive(w, r, s.opGate, func(b []byte) (string, string) { return opIDOf(t, b) },
		func(a arrival, raw string) {
			if s.cfg.OnOpRequest != nil {
				s.cfg.OnOpRequest(OpRequestInfo{RequestInfo: RequestInfo{Request: r, Key: raw, OrderID: a.orderID,
					Body: a.body}, Op: t.name, OpID: a.id})
			}
		})
	if !ok {
		return
	}
	req, perr := parseOp(t, a.body)
	var fp string
	bodyErr := a.bodyErr
	if perr == nil && bodyErr == nil {
		fp, bodyErr = fingerprint(r.Method, r.URL.Path, a.body)
	}
	if perr == nil && bodyErr != nil {
		perr = bodyError(bodyErr)
	}
	if perr != nil {
		s.fail(w, s.opGate, a.id, http.StatusBadRequest, perr) // not stored: fixed and resent, the key works
		return
	}
	s.execute(w, s.opGate, a, fp, func(c faults.Claimed) { s.processOp(w, a, t, req, c) })
}

// processOp executes an operation that holds its key's claim.
func (s *Server) processOp(w http.ResponseWriter, a admitted, t opType, req opRequest, c faults.Claimed) {
	if a.fault == Mid {
		s.crash(w, s.opGate, a, c)
		return
	}
	if s.cfg.Latency > 0 {
		time.Sleep(s.cfg.Latency)
	}
	if s.crash(w, s.opGate, a, c) {
		return
	}
	resp, ok := s.commitOp(opAttempt{t: t, merchant: a.merchant, key: a.key, req: req}, c)
	if !ok {
		s.inUse(w, s.opGate, a.id) // our lease ran out and another request took the key over
		return
	}
	s.opGate.Reply(w, a.id, resp, false, a.fault)
}

// opAttempt is a refund, capture or cancel being decided, its key scoped
// to its merchant.
type opAttempt struct {
	t             opType
	merchant, key string
	req           opRequest
}

// commitOp decides the operation and stores its answer with its record in
// the books, in one step (faults.Operate).
func (s *Server) commitOp(a opAttempt, c faults.Claimed) (faults.Stored, bool) {
	charge, found := s.ledger.Find(a.merchant, a.req.OrderID)
	return faults.Operate(s.ledger, a.merchant, charge.ID, c, func(b fakes.Balance, _ bool) faults.Decision {
		resp, op := s.decideOp(a, b, found)
		return faults.Decision{Resp: resp, Op: op}
	})
}

// handleOpLookup answers GET ?refund_id= (capture_id, cancel_id) with the
// merchant's operation (200, the body of its answer) or 404; with
// &idempotency_key=K, only an operation made under K. It reads the books,
// so it works after the key's retention, and is never faulted.
func (s *Server) handleOpLookup(w http.ResponseWriter, r *http.Request, t opType) {
	s.opLookups.Add(1)
	merchant, ok := s.merchant(r)
	if !ok {
		s.unauthorized(w, nil, "")
		return
	}
	id := r.URL.Query().Get(t.idField)
	if id == "" {
		writeJSON(w, http.StatusBadRequest, invalidParam(t.idField, t.idField+" is required").Body())
		return
	}
	op, found := s.ops.find(t, merchant, id)
	if key := r.URL.Query().Get("idempotency_key"); found && key != "" && op.Key != key {
		found = false // made, but under another attempt's key
	}
	if !found {
		writeJSON(w, http.StatusNotFound, (&apiError{Type: faults.TypeInvalid, Code: "resource_missing",
			Param: t.idField, Message: "no such " + t.name}).Body())
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(opResultOf(t, op)))
}
