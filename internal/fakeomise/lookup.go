package fakeomise

import (
	"net/http"
	"strconv"
	"time"
)

// handleRetrieve answers GET /charges/{id} for the caller's account.
func (s *Server) handleRetrieve(w http.ResponseWriter, r *http.Request, id string) {
	s.stats.retrieval()
	if s.lookups.fail() {
		writeError(w, "service_unavailable", "the service is temporarily unavailable")
		return
	}
	account, ok := s.account(r)
	if !ok {
		writeError(w, "authentication_failure", "authentication failed")
		return
	}
	c, found := s.charges.get(id)
	if !found || c.account != account {
		writeError(w, "not_found", "charge "+id+" was not found")
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(c))
}

// handleList answers GET /charges with Omise's pagination parameters:
// from and to (ISO 8601, inclusive), offset, limit (default 20, at most
// 100) and order (chronological, the default, or reverse_chronological).
// It reads the same store as charges are written to: a charge is listed
// as soon as it exists, or Config.ListDelay later.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	s.stats.list()
	if s.lookups.fail() {
		writeError(w, "service_unavailable", "the service is temporarily unavailable")
		return
	}
	account, ok := s.account(r)
	if !ok {
		writeError(w, "authentication_failure", "authentication failed")
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
	if visible := s.now().Add(-s.cfg.ListDelay); visible.Before(until) {
		until = visible
	}
	page, total := s.charges.list(account, from, until, offset, limit, order == "reverse_chronological")
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
