package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
)

var errBodyTooLarge = errors.New("guard: request body too large")

// readBody reads the whole body of r, at most max bytes: errBodyTooLarge
// beyond, or the reader's error. The body is read in full before the
// handler runs, because the fingerprint covers it.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > max {
		return nil, errBodyTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errBodyTooLarge
	}
	return b, nil
}

// withBody returns r for the handler: a shallow copy with context ctx
// whose body reads body again from the start, as often as GetBody is
// called.
func withBody(ctx context.Context, r *http.Request, body []byte) *http.Request {
	r2 := r.WithContext(ctx)
	r2.ContentLength = int64(len(body))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if len(body) == 0 {
		r2.Body, r2.GetBody = http.NoBody, nil
	}
	return r2
}
