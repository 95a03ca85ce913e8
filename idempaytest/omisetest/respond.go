package omisetest

import (
	"net/http"
	"strings"

	"github.com/idempay/idempay/internal/faults"
)

// apiError is Omise's error body.
type apiError struct {
	Object   string `json:"object"`
	Location string `json:"location"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// statusOf gives each error code the status Omise answers it with.
var statusOf = map[string]int{
	"authentication_failure": http.StatusUnauthorized,
	"not_found":              http.StatusNotFound,
	"used_token":             http.StatusBadRequest,
	"invalid_card":           http.StatusBadRequest,
	"invalid_charge":         http.StatusBadRequest,
	"bad_request":            http.StatusBadRequest,
	"failed_fraud_check":     http.StatusBadRequest,
	"backend_error":          http.StatusInternalServerError,
	"service_unavailable":    http.StatusServiceUnavailable,
	"conflict":               http.StatusConflict,
	"idempotency_key_reused": http.StatusUnprocessableEntity,
	"failed_capture":         http.StatusBadRequest,
	"failed_refund":          http.StatusBadRequest,
	"invalid_amount":         http.StatusBadRequest,
}

func errorBody(code, message string) (int, []byte) {
	return statusOf[code], mustJSON(apiError{Object: "error",
		Location: "https://www.omise.co/api-errors#" + strings.ReplaceAll(code, "_", "-"), Code: code, Message: message})
}

func writeError(w http.ResponseWriter, code, message string) {
	status, body := errorBody(code, message)
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone
}

// answer writes a 200 JSON answer.
func answer(w http.ResponseWriter, v any) { writeJSON(w, http.StatusOK, mustJSON(v)) }

func mustJSON(v any) []byte { return faults.MustJSON(v) }

// newID returns an Omise-like test-mode ID.
func newID(prefix string) string { return strings.ToLower(faults.NewID(prefix+"_test_", 19)) }
