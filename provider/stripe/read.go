package stripe

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// ReadCharge interprets Stripe's answer to a charge attempt; see README.md
// for the table. A 2xx whose body is not a PaymentIntent is KindUnknown:
// Stripe did something, the adapter cannot tell what.
func (p Provider) ReadCharge(resp *http.Response, body []byte) idempay.Verdict {
	v := headerVerdict(resp)
	if v.Kind == idempay.KindSucceeded {
		pi, ok := parseIntent(body)
		if !ok {
			v.Kind = idempay.KindUnknown
			return v
		}
		return pi.verdict(v)
	}
	if v.Kind == idempay.KindUnknown { // 1xx, 3xx
		return v
	}
	e := readError(body)
	v.Err = e.apiError()
	v.Kind = errorKind(resp.StatusCode, v.Kind, e)
	return v
}

// headerVerdict is what the status and headers of an answer say: the
// status's kind, the replay mark, the request ID and Stripe's retry advice.
func headerVerdict(resp *http.Response) idempay.Verdict {
	return idempay.Verdict{
		Kind:      idempay.ClassifyStatus(resp.StatusCode),
		Replayed:  strings.EqualFold(strings.TrimSpace(resp.Header.Get("Idempotent-Replayed")), "true"),
		RequestID: resp.Header.Get("Request-Id"),
		Retry:     shouldRetry(resp.Header),
	}
}

// shouldRetry reads Stripe-Should-Retry: Stripe's own word, when it gives
// one, on whether the request may be retried.
func shouldRetry(h http.Header) idempay.Retry {
	if b, err := strconv.ParseBool(strings.TrimSpace(h.Get("Stripe-Should-Retry"))); err == nil {
		if b {
			return idempay.RetryYes
		}
		return idempay.RetryNo
	}
	return idempay.RetryDefault
}

// readError reads {"error": {...}}; a body that is not one (a proxy's
// HTML page, say) keeps its start as the message.
func readError(body []byte) *stripeError {
	var b struct {
		Error *stripeError `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || b.Error == nil {
		return &stripeError{Message: wire.Snippet(body)}
	}
	return b.Error
}

// errorKind refines the status's kind with the error's type and code.
func errorKind(status int, k idempay.Kind, e *stripeError) idempay.Kind {
	switch {
	case e.Type == "idempotency_error" && status == http.StatusConflict,
		e.Code == "idempotency_key_in_use":
		// Another request with the key is running.
		return idempay.KindInFlight
	case e.Type == "idempotency_error":
		// The key was used with other parameters: something was done
		// under it, so the outcome is unknown.
		return idempay.KindKeyConflict
	}
	return k
}
