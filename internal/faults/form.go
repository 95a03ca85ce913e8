package faults

import (
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxFormBody bounds a form body; charge bodies are small. What is
// beyond it is left unread.
const maxFormBody = 1 << 20

// FormRequest is a form-encoded charge request (Stripe's and Omise's wire)
// as it arrives at a fake, before any fault or processing.
type FormRequest struct {
	Request *http.Request // its body has been read: use Form
	Key     string        // the Idempotency-Key header, trimmed
	Intent  string        // metadata[idempay_intent], if present
	Form    url.Values    // the parsed body
}

// ReadForm reads r's form body (its first MiB), its Idempotency-Key
// header and the intent ID under metadata[intentKey]. The error reports a
// body that could not be read or parsed; the FormRequest holds what could
// be read either way, for the counters and scripts that look at every
// request.
func ReadForm(r *http.Request, intentKey string) (FormRequest, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxFormBody))
	form, perr := url.ParseQuery(string(raw))
	if err == nil {
		err = perr
	}
	return FormRequest{
		Request: r,
		Key:     strings.TrimSpace(r.Header.Get("Idempotency-Key")),
		Intent:  form.Get("metadata[" + intentKey + "]"),
		Form:    form,
	}, err
}
