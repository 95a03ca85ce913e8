package omise

import (
	"encoding/json"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// omiseError is Omise's error body.
type omiseError struct {
	Object  string `json:"object"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// codeKinds maps Omise's error codes to verdicts; a code not listed is
// classified by its HTTP status.
var codeKinds = map[string]idempay.Kind{
	"authentication_failure": idempay.KindConfig,
	// The card token was consumed, by this intent's charge (whose answer
	// was lost) or by another: not proof of failure. The guard looks the
	// charge up instead of trusting it.
	"used_token":     idempay.KindUnknown,
	"invalid_card":   idempay.KindInvalid,
	"invalid_charge": idempay.KindInvalid,
	"bad_request":    idempay.KindInvalid,
	// On POST /charges, not_found names a token, card, customer or source
	// that does not exist for this key: the parameters are wrong, and no
	// resend can change that (a wrong endpoint answers without an Omise
	// error body, which stays a configuration error).
	"not_found":          idempay.KindInvalid,
	"failed_fraud_check": idempay.KindDeclined,
	// A capture failing while charging may leave an authorisation behind.
	"failed_capture": idempay.KindUnknown,
	"backend_error":  idempay.KindServerError,
}

// ReadCharge interprets Omise's answer to a charge attempt; see README.md
// for the table. Omise marks no replay, so Verdict.Replayed is never set.
func (p Provider) ReadCharge(resp *http.Response, body []byte) idempay.Verdict {
	v := idempay.Verdict{Kind: idempay.ClassifyStatus(resp.StatusCode), RequestID: requestID(resp.Header)}
	switch v.Kind {
	case idempay.KindSucceeded:
		c, ok := parseCharge(body)
		if !ok {
			v.Kind = idempay.KindUnknown // Omise did something we cannot read
			return v
		}
		return c.verdict(v)
	case idempay.KindUnknown: // 1xx, 3xx
		return v
	}
	e, isOmise := readError(body)
	v.Err = &idempay.APIError{Code: e.Code, Message: e.Message}
	if k, ok := codeKinds[e.Code]; ok && isOmise {
		v.Kind = k
	} else if resp.StatusCode == http.StatusUnprocessableEntity {
		// Omise documents no 422; the IETF draft answers it to a key
		// re-used with other parameters: unknown rather than failed.
		v.Kind = idempay.KindKeyConflict
	}
	return v
}

// readError reads {"object": "error", ...}; isOmise is false for a body
// that is not one (a proxy's page), whose start becomes the message.
func readError(body []byte) (e omiseError, isOmise bool) {
	if json.Unmarshal(body, &e) != nil || e.Object != "error" || e.Code == "" {
		return omiseError{Message: wire.Snippet(body)}, false
	}
	return e, true
}

// requestID returns a request ID header if Omise sent one; it documents
// none, so both common spellings are read.
func requestID(h http.Header) string {
	if id := h.Get("Request-Id"); id != "" {
		return id
	}
	return h.Get("X-Request-Id")
}
