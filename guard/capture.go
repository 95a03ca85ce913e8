package guard

import (
	"net/http"
	"time"
)

// capture is the ResponseWriter the guarded handler writes to. Everything
// goes through to the client as it is written (so Flush works and a slow
// handler streams); on the way it records the status, the headers as they
// were when the status was sent, and the body up to a limit, for the store.
//
// It supports http.Flusher and, through http.ResponseController, write and
// read deadlines. It does not support Hijack, on purpose: bytes written to
// a hijacked connection could not be recorded or replayed, so a handler
// that hijacks (WebSocket upgrades) cannot be guarded.
type capture struct {
	w        http.ResponseWriter
	limit    int
	status   int
	header   http.Header // snapshot when the status was sent
	body     []byte
	overflow bool // the body outgrew limit: body was dropped
	written  int64
}

func newCapture(w http.ResponseWriter, limit int) *capture {
	return &capture{w: w, limit: limit}
}

// Header returns the live header map of the client's response.
func (c *capture) Header() http.Header { return c.w.Header() }

// WriteHeader sends the status. Informational statuses (1xx) go through
// without being recorded; after the final status, further calls are
// passed on (net/http logs them) and ignored here.
func (c *capture) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
		c.header = c.w.Header().Clone()
	}
	c.w.WriteHeader(code)
}

// Write sends b and records it while the body fits the limit.
func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	n, err := c.w.Write(b)
	c.written += int64(n)
	if !c.overflow {
		if len(c.body)+n > c.limit {
			c.overflow, c.body = true, nil
		} else {
			c.body = append(c.body, b[:n]...)
		}
	}
	return n, err
}

// Flush sends what is buffered, if the client's writer can.
func (c *capture) Flush() { _ = c.FlushError() }

// FlushError is Flush for http.ResponseController, with the error.
func (c *capture) FlushError() error {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(c.w).Flush()
}

// SetWriteDeadline passes the deadline to the client's writer.
func (c *capture) SetWriteDeadline(t time.Time) error {
	return http.NewResponseController(c.w).SetWriteDeadline(t)
}

// SetReadDeadline passes the deadline to the client's writer.
func (c *capture) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(c.w).SetReadDeadline(t)
}

// result is the response as the client got it: a handler that wrote
// nothing sent an empty 200, with its headers as they are at the end.
func (c *capture) result() (status int, header http.Header) {
	if c.status == 0 {
		return http.StatusOK, c.w.Header().Clone()
	}
	return c.status, c.header
}
