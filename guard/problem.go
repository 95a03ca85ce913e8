package guard

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// DraftURL names the IETF draft whose error scenarios the guard answers:
// the type of its 400, 409 and 422 problems.
const DraftURL = "https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/"

// Problem codes, in the "code" member of every problem the guard answers
// (RFC 9457 extension member), for clients that switch on them.
const (
	CodeKeyMissing    = "idempotency_key_missing"   // 400
	CodeKeyMalformed  = "idempotency_key_malformed" // 400
	CodeKeyInUse      = "idempotency_key_in_use"    // 409, Retry-After
	CodeKeyUnsettled  = "idempotency_key_unsettled" // 409, Retry-After
	CodeKeyReused     = "idempotency_key_reused"    // 422
	CodeNoIdentity    = "no_identity"               // 401
	CodeBodyTooLarge  = "body_too_large"            // 413
	CodeBodyUnread    = "body_unreadable"           // 400
	CodeStoreDown     = "store_unavailable"         // 503, Retry-After
	CodeNotStored     = "response_not_stored"       // 500, replayed
	CodeResultCorrupt = "stored_result_unreadable"  // 500
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
	// RetryAfter is not sent in the body; it sets the header.
	retryAfter time.Duration
	replayed   bool
}

// draftProblem is one of the draft's error scenarios.
func draftProblem(status int, code, title, detail string) problem {
	return problem{Type: DraftURL, Title: title, Status: status, Detail: detail, Code: code}
}

// plainProblem is a problem no spec defines: type about:blank, whose title
// is the status text (RFC 9457, 4.2.1).
func plainProblem(status int, code, detail string) problem {
	return problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code}
}

func (p problem) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(p.retryAfter)))
	}
	if p.replayed {
		h.Set(HeaderReplayed, "true")
	}
	b, _ := json.Marshal(p)
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(b, '\n'))
}

// retryAfterSeconds rounds d up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

func keyProblem(err error) problem {
	ke, _ := err.(*keyError)
	if ke != nil && ke.kind == errKeyMissing {
		return draftProblem(http.StatusBadRequest, CodeKeyMissing, "Idempotency-Key is missing",
			"This request must carry an Idempotency-Key header ("+ke.reason+"), as draft-ietf-httpapi-idempotency-key-header defines: "+
				"one key per operation, sent again unchanged on every retry.")
	}
	return draftProblem(http.StatusBadRequest, CodeKeyMalformed, "Idempotency-Key is malformed",
		"The Idempotency-Key header must be one key, as a token or a structured-field string "+
			"(draft-ietf-httpapi-idempotency-key-header): "+err.Error()+".")
}

func inUseProblem(d time.Duration) problem {
	p := draftProblem(http.StatusConflict, CodeKeyInUse, "A request with this Idempotency-Key is being processed",
		"An earlier request with this key has not finished. Retry after the delay in Retry-After; the retry gets its response.")
	p.retryAfter = d
	return p
}

func unsettledProblem(d time.Duration) problem {
	p := draftProblem(http.StatusConflict, CodeKeyUnsettled, "The request with this Idempotency-Key is not settled yet",
		"An earlier request with this key failed after it may have had an effect (a payment may have been made). "+
			"It is being settled; retry later with the same key, and never with a new one for this operation.")
	p.retryAfter = d
	return p
}

func reusedProblem() problem {
	return draftProblem(http.StatusUnprocessableEntity, CodeKeyReused, "Idempotency-Key reused with another request",
		"This key was used with another method, path, caller or body. A key stands for one operation: "+
			"send a new key for a new operation, or the original request unchanged to get its response.")
}
