package wire

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idempay/idempay"
)

// NewFormPost builds a POST of form to u, with key in the Idempotency-Key
// header. url.Values encodes its keys sorted, so the body is the same
// bytes on every attempt and every restart.
func NewFormPost(ctx context.Context, u string, form url.Values, key string) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Idempotency-Key", key)
	return r, nil
}

// SetIf sets the form parameter k to v, unless v is empty.
func SetIf(f url.Values, k, v string) {
	if v != "" {
		f.Set(k, v)
	}
}

// Printable reports whether s is printable ASCII without spaces, as a
// header value such as an API version must be.
func Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Snippet quotes the start of an answer body that could not be read (a
// proxy's page, say), for an error message: at most 200 bytes, then "...".
func Snippet(b []byte) string {
	const n = 200
	switch {
	case len(b) == 0:
		return ""
	case len(b) > n:
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}

// Invalid is the *idempay.ValidationError of an adapter's Validate: the
// field at fault and why.
func Invalid(field, format string, args ...any) error {
	return &idempay.ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
