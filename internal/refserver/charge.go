package refserver

import (
	"net/http"
	"strings"
	"time"

	"github.com/idempay/idempay/internal/faults"
)

// maxBody bounds a charge body; the contract's bodies are tiny.
const maxBody = 1 << 20

// DeclineTokenPrefix starts every card token that the server declines.
const DeclineTokenPrefix = "tok_decline"

// handleCharge runs one charge request through its life: arrival (hooks,
// counters, early faults), admission (auth, key, body), then execution
// under the key.
func (s *Server) handleCharge(w http.ResponseWriter, r *http.Request) {
	a, ok := s.arrive(w, r, s.charges, func(b []byte) (string, string) { id := orderIDOf(b); return id, id },
		func(a arrival, raw string) {
			if s.cfg.OnRequest != nil {
				s.cfg.OnRequest(RequestInfo{Request: r, Key: raw, OrderID: a.orderID, Body: a.body})
			}
		})
	if !ok {
		return
	}
	req, fp, perr := admitBody(r, a.body, a.bodyErr)
	if perr != nil {
		// Not stored under the key: fixing the request and resending it
		// with the same key must work.
		s.fail(w, s.charges, a.id, http.StatusBadRequest, perr)
		return
	}
	s.execute(w, s.charges, a, fp, func(c faults.Claimed) { s.process(w, a, req, c) })
}

// admitBody validates the body and fingerprints the request.
func admitBody(r *http.Request, body []byte, bodyErr error) (chargeRequest, string, *apiError) {
	if bodyErr != nil {
		return chargeRequest{}, "", &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid",
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

// process executes a charge that holds its key's claim.
func (s *Server) process(w http.ResponseWriter, a admitted, req chargeRequest, c faults.Claimed) {
	if a.fault == Mid {
		// The crash: no charge, no release. Only the lease frees the key.
		s.crash(w, s.charges, a, c)
		return
	}
	if s.cfg.Latency > 0 {
		time.Sleep(s.cfg.Latency) // not cut short by the client leaving: servers carry on
	}
	if s.crash(w, s.charges, a, c) {
		return
	}
	resp, charge := s.perform(a, req)
	var record func() // in the commit's critical section: no charge without its answer
	if charge != nil {
		record = func() { s.ledger.Add(*charge) }
	}
	if !c.Commit(resp, record) {
		// Our lease ran out and another request took the key over; it
		// charges, we must not. The client retries and gets its answer.
		s.inUse(w, s.charges, a.id)
		return
	}
	s.charges.Reply(w, a.id, resp, false, a.fault)
}

// perform decides the outcome of a charge: a decline or a new charge.
func (s *Server) perform(a admitted, req chargeRequest) (faults.Stored, *Charge) {
	if strings.HasPrefix(req.OmiseToken, DeclineTokenPrefix) {
		return faults.Stored{Status: http.StatusPaymentRequired, Body: (&apiError{Type: faults.TypeCard, Code: "card_declined",
			DeclineCode: "generic_decline", Message: "the card was declined"}).Body()}, nil
	}
	amount, currency := req.money()
	c := &Charge{
		ID:       newID("ch_"),
		Merchant: a.merchant,
		Intent:   req.OrderID,
		Key:      a.key,
		Amount:   amount,
		Currency: currency,
		Time:     s.now(),
		// Sent with "capture": false, the charge is an authorisation.
		Authorized: req.Capture != nil && !*req.Capture,
	}
	res := resultOf(*c)
	if c.Authorized {
		res.Status = "authorized"
	}
	return faults.Stored{Status: http.StatusCreated, Body: mustJSON(res)}, c
}
