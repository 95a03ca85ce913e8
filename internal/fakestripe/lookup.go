package fakestripe

import (
	"net/http"
	"regexp"
	"strings"
)

// handleRetrieve answers GET /v1/payment_intents/{id} for the caller's
// account.
func (s *Server) handleRetrieve(w http.ResponseWriter, r *http.Request, id string) {
	s.stats.retrieval()
	account, ok := s.account(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, &apiError{Type: typeInvalid, Message: "Invalid API Key provided."})
		return
	}
	pi, found := s.intents.get(id)
	if !found || pi.account != account {
		writeError(w, http.StatusNotFound, &apiError{Type: typeInvalid, Code: "resource_missing", Param: "intent",
			Message: "No such payment_intent: '" + id + "'"})
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(pi))
}

// metadataClause is the one query form the fake understands,
// metadata['key']:'value', with either quote and backslash escapes.
var metadataClause = regexp.MustCompile(`^metadata\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]:(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")$`)

// handleSearch answers GET /v1/payment_intents/search for a metadata
// clause, seeing only intents older than SearchDelay.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	s.stats.search()
	account, ok := s.account(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, &apiError{Type: typeInvalid, Message: "Invalid API Key provided."})
		return
	}
	m := metadataClause.FindStringSubmatch(strings.TrimSpace(r.URL.Query().Get("query")))
	if m == nil {
		writeError(w, http.StatusBadRequest, invalidParam("query", "The fake understands only metadata['key']:'value' queries."))
		return
	}
	key, value := unescape(m[1]+m[2]), unescape(m[3]+m[4])
	found := s.intents.search(account, key, value, s.now().Add(-s.cfg.SearchDelay))
	data := make([]PaymentIntent, len(found))
	copy(data, found)
	writeJSON(w, http.StatusOK, mustJSON(struct {
		Object   string          `json:"object"`
		URL      string          `json:"url"`
		HasMore  bool            `json:"has_more"`
		NextPage *string         `json:"next_page"`
		Data     []PaymentIntent `json:"data"`
	}{"search_result", "/v1/payment_intents/search", false, nil, data}))
}

// unescape removes the backslashes of a quoted search value.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
