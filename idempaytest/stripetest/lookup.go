package stripetest

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// lookup starts every GET: counted on n, authenticated. It returns the
// account, or answers 401.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request, n *atomic.Int64) (string, bool) {
	n.Add(1)
	account, ok := s.account(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, &apiError{Type: faults.TypeInvalid, Message: "Invalid API Key provided."})
	}
	return account, ok
}

// handleRetrieve answers GET /v1/payment_intents/{id} for the caller's
// account.
func (s *Server) handleRetrieve(w http.ResponseWriter, r *http.Request, id string) {
	account, ok := s.lookup(w, r, &s.retrievals)
	if !ok {
		return
	}
	pi, found := s.intents.get(id)
	if !found || pi.account != account {
		writeError(w, http.StatusNotFound, &apiError{Type: faults.TypeInvalid, Code: "resource_missing", Param: "intent",
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
	account, ok := s.lookup(w, r, &s.searches)
	if !ok {
		return
	}
	m := metadataClause.FindStringSubmatch(strings.TrimSpace(r.URL.Query().Get("query")))
	if m == nil {
		writeError(w, http.StatusBadRequest, invalidParam("query", "The fake understands only metadata['key']:'value' queries."))
		return
	}
	key, value := unescape(m[1]+m[2]), unescape(m[3]+m[4])
	found := s.intents.search(account, key, value, s.now().Add(-s.cfg.searchDelay))
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

// handleListRefunds answers GET /v1/refunds, newest first, for the
// caller's account: payment_intent= or charge= narrows it to one
// PaymentIntent's refunds, limit (1 to 100, default 10) and
// starting_after= page it as Stripe does.
func (s *Server) handleListRefunds(w http.ResponseWriter, r *http.Request) {
	account, ok := s.lookup(w, r, &s.refundLookups)
	if !ok {
		return
	}
	q := r.URL.Query()
	for name := range q {
		switch name {
		case "payment_intent", "charge", "limit", "starting_after", "expand[]", "expand[0]":
		default:
			writeError(w, http.StatusBadRequest, unknownParam(name))
			return
		}
	}
	limit := 10
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, &apiError{Type: faults.TypeInvalid, Code: "parameter_invalid_integer",
				Param: "limit", Message: "Invalid integer: " + v})
			return
		}
		limit = n
	}
	pi, ch := q.Get("payment_intent"), q.Get("charge")
	all := s.intents.listRefunds(account, func(re *Refund) bool {
		return (pi == "" || re.PaymentIntent == pi) && (ch == "" || re.Charge == ch)
	})
	if after := q.Get("starting_after"); after != "" {
		i := slices.IndexFunc(all, func(re Refund) bool { return re.ID == after })
		if i < 0 {
			writeError(w, http.StatusBadRequest, &apiError{Type: faults.TypeInvalid, Code: "resource_missing",
				Param: "starting_after", Message: "No such refund: '" + after + "'"})
			return
		}
		all = all[i+1:]
	}
	page := all[:min(limit, len(all))]
	writeJSON(w, http.StatusOK, mustJSON(struct {
		Object  string   `json:"object"`
		URL     string   `json:"url"`
		HasMore bool     `json:"has_more"`
		Data    []Refund `json:"data"`
	}{"list", "/v1/refunds", len(all) > len(page), append([]Refund{}, page...)}))
}

// handleRetrieveRefund answers GET /v1/refunds/{id} for the caller's
// account.
func (s *Server) handleRetrieveRefund(w http.ResponseWriter, r *http.Request, id string) {
	account, ok := s.lookup(w, r, &s.refundLookups)
	if !ok {
		return
	}
	re, found := s.intents.refund(id)
	if !found || re.account != account {
		writeError(w, http.StatusNotFound, &apiError{Type: faults.TypeInvalid, Code: "resource_missing", Param: "id",
			Message: "No such refund: '" + id + "'"})
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(re))
}

// Refund returns a copy of a stored refund.
func (s *Server) Refund(id string) (Refund, bool) { return s.intents.refund(id) }

// Refunds returns the refunds of a PaymentIntent, newest first.
func (s *Server) Refunds(paymentIntent string) []Refund {
	return s.intents.refundsOf(paymentIntent)
}

// CompleteRefund settles a pending refund (WithPendingRefunds): it
// succeeds, or fails (failure_reason "declined") and frees its amount in
// the books. It reports whether a pending refund was found.
func (s *Server) CompleteRefund(id string, succeed bool) bool {
	re, ok := s.intents.settleRefund(id, succeed)
	if !ok {
		return false
	}
	status := fakes.OpSucceeded
	if !succeed {
		status = fakes.OpFailed
	}
	s.ledger.SetStatus(re.account, id, status)
	return true
}
