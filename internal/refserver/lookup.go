package refserver

import (
	"net/http"

	"github.com/idempay/idempay/internal/faults"
)

// handleLookup answers GET ?order_id=X with the tenant's first charge for
// the order (200, the charge body) or 404 resource_missing, so that a
// client can settle an intent whose key it may no longer resend. With
// &idempotency_key=K it answers only a charge made under K.
// It reads the ledger, not the key store, so it works after retention.
func (s *Server) handleLookup(w http.ResponseWriter, r *http.Request) {
	s.lookups.Add(1)
	merchant, ok := s.merchant(r)
	if !ok {
		s.unauthorized(w, nil, "")
		return
	}
	orderID := r.URL.Query().Get("order_id")
	if orderID == "" {
		writeJSON(w, http.StatusBadRequest, invalidParam("order_id", "order_id is required").Body())
		return
	}
	c, found := s.ledger.Find(merchant, orderID)
	if key := r.URL.Query().Get("idempotency_key"); found && key != "" && c.Key != key {
		found = false // charged, but by another attempt's key
	}
	if !found {
		writeJSON(w, http.StatusNotFound, (&apiError{Type: faults.TypeInvalid, Code: "resource_missing",
			Param: "order_id", Message: "no charge for this order"}).Body())
		return
	}
	writeJSON(w, http.StatusOK, mustJSON(resultOf(c)))
}
