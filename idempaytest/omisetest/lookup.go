package omisetest

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// handleRetrieve answers GET /charges/{id} for the caller's account.
func (s *Server) handleRetrieve(w http.ResponseWriter, r *http.Request, id string) {
	account, ok := s.lookup(w, r, &s.retrievals)
	if !ok {
		return
	}
	c, found := s.store.get(id)
	if !found || c.account != account {
		writeError(w, "not_found", "charge "+id+" was not found")
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(c))
}

// lookup starts every lookup: counted on n, failed as WithLookupFailures
// says, authenticated. It returns the account, or answers what ends it.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request, n *atomic.Int64) (string, bool) {
	n.Add(1)
	if s.lookups.fail() {
		writeError(w, "service_unavailable", "the service is temporarily unavailable")
		return "", false
	}
	account, ok := s.account(r)
	if !ok {
		writeError(w, "authentication_failure", "authentication failed")
	}
	return account, ok
}

// handleList answers GET /charges with Omise's pagination parameters:
// from and to (ISO 8601, inclusive), offset, limit (default 20, at most
// 100) and order (chronological, the default, or reverse_chronological).
// It reads the same store as charges are written to: a charge is listed
// as soon as it exists, or WithListDelay's delay later.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	account, ok := s.lookup(w, r, &s.lists)
	if !ok {
		return
	}
	q := r.URL.Query()
	// Times have Omise's precision, whole seconds.
	from, to := time.Unix(0, 0).UTC(), s.now().UTC().Truncate(time.Second)
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.RFC3339, v); err != nil {
			writeError(w, "bad_request", "from is not an ISO 8601 time")
			return
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.RFC3339, v); err != nil {
			writeError(w, "bad_request", "to is not an ISO 8601 time")
			return
		}
	}
	offset, limit := intParam(q.Get("offset"), 0), intParam(q.Get("limit"), 20)
	order := q.Get("order")
	if order == "" {
		order = "chronological"
	}
	if offset < 0 || limit < 1 || limit > 100 || (order != "chronological" && order != "reverse_chronological") {
		writeError(w, "bad_request", "invalid pagination parameters")
		return
	}
	until := to
	if visible := s.now().Add(-s.cfg.listDelay); visible.Before(until) {
		until = visible
	}
	page, total := s.store.list(account, from, until, offset, limit, order == "reverse_chronological")
	writeJSON(w, http.StatusOK, mustJSON(struct {
		Object   string   `json:"object"`
		Location string   `json:"location"`
		From     string   `json:"from"`
		To       string   `json:"to"`
		Offset   int      `json:"offset"`
		Limit    int      `json:"limit"`
		Total    int      `json:"total"`
		Order    string   `json:"order"`
		Data     []Charge `json:"data"`
	}{"list", "/charges", from.Format(time.RFC3339), to.Format(time.RFC3339), offset, limit, total, order, page}))
}

func intParam(v string, def int) int {
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// handleListRefunds answers GET /charges/{id}/refunds for the caller's
// account, with the charges list's pagination (offset, limit up to 100,
// order): every refund at once, as the charge's own refunds list does.
func (s *Server) handleListRefunds(w http.ResponseWriter, r *http.Request, id string) {
	c, found := s.refundLookup(w, r, id)
	if !found {
		return
	}
	q := r.URL.Query()
	offset, limit := intParam(q.Get("offset"), 0), intParam(q.Get("limit"), 20)
	order := cmp.Or(q.Get("order"), "chronological")
	if offset < 0 || limit < 1 || limit > 100 || (order != "chronological" && order != "reverse_chronological") {
		writeError(w, "bad_request", "invalid pagination parameters")
		return
	}
	l := *c.Refunds
	all := l.Data
	if order == "reverse_chronological" {
		all = slices.Clone(all)
		slices.Reverse(all)
	}
	l.Offset, l.Limit, l.Order, l.To = offset, limit, order, s.now().UTC().Format(time.RFC3339)
	l.Data = all[min(offset, len(all)):min(offset+limit, len(all))]
	answer(w, l)
}

// handleRetrieveRefund answers GET /charges/{id}/refunds/{refund}.
func (s *Server) handleRetrieveRefund(w http.ResponseWriter, r *http.Request, id, refund string) {
	c, found := s.refundLookup(w, r, id)
	if !found {
		return
	}
	for _, re := range c.Refunds.Data {
		if re.ID == refund {
			answer(w, re)
			return
		}
	}
	writeError(w, "not_found", "refund "+refund+" was not found")
}

// refundLookup starts a refund lookup: counted, faulted as every lookup
// is, authenticated, its charge found in the caller's account.
func (s *Server) refundLookup(w http.ResponseWriter, r *http.Request, id string) (Charge, bool) {
	account, ok := s.lookup(w, r, &s.refundGets)
	if !ok {
		return Charge{}, false
	}
	c, found := s.store.get(id)
	if !found || c.account != account {
		writeError(w, "not_found", "charge "+id+" was not found")
		return Charge{}, false
	}
	return c, true
}
