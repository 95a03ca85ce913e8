package guard

import (
	"net/http"
	"slices"
	"time"
)

// capture is the ResponseWriter the guarded handler writes to. On the
// way it records the status, the headers as they were when the status was
// sent, and the body as the handler wrote it (not as far as the connection
// took it: a client gone, a TimeoutHandler outside), up to a limit, for the
// store.
//
// A response the guard may stand by (hold says so from its status: one it
// may store for replay, or one of a request marked unsettled) is held:
// nothing reaches the client until the guard has written the record's
// final state durably (the response, or the lock), so that no client sees
// an answer whose retry could find the key free and run the handler again.
// Other responses (a 5xx) go through as they are written: their key is
// released either way.
//
// A held response that the handler flushes, or whose body outgrows the
// limit, streams from then on if pin says it may: for an answer to store,
// once the key is locked (durably, as an unsettled request's lock: a retry
// is refused until the close replaces it). Otherwise it stays held; an
// unsettled request's response always waits for its lock.
//
// It supports http.Flusher and, through http.ResponseController, write and
// read deadlines. It does not support Hijack, on purpose: bytes written to
// a hijacked connection could not be recorded or replayed, so a handler
// that hijacks (WebSocket upgrades) cannot be guarded.
type capture struct {
	w        http.ResponseWriter
	limit    int
	hold     func(status int) bool // asked when the status is written: hold the response?
	pin      func(status int) bool // may a held response stream? (it locks the key if need be)
	status   int
	header   http.Header // snapshot when the status was written
	body     []byte
	overflow bool // the body outgrew limit: body was dropped
	holding  bool // nothing sent yet: the status and body wait in here
	held     []byte
	pinTried bool // pin was asked (once: a store that refused it is not asked again)
	// headerSent: the status went to the client's writer.
	headerSent bool
}

func newCapture(w http.ResponseWriter, limit int, hold, pin func(status int) bool) *capture {
	return &capture{w: w, limit: limit, hold: hold, pin: pin}
}

// Header returns the live header map of the client's response.
func (c *capture) Header() http.Header { return c.w.Header() }

// WriteHeader records the status and the headers as they are now (what
// net/http sends too), and holds them until the first byte of the body,
// a Flush or the handler's end: then a Content-Type left to sniffing is
// fixed from the first bytes, the same for the client and every replay.
// Informational statuses (1xx) go through without being recorded; after
// the final status, further calls are passed on (net/http logs them) and
// ignored here.
func (c *capture) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
		c.header = c.w.Header().Clone()
		c.holding = c.hold != nil && c.hold(code)
		return
	}
	if c.status == 0 || c.headerSent {
		c.w.WriteHeader(code)
	}
}

// sendHeader sends the recorded status, unless it is held or sent
// already.
func (c *capture) sendHeader() {
	if c.holding || c.headerSent || c.status == 0 {
		return
	}
	c.headerSent = true
	c.resetHeader(c.header)
	c.w.WriteHeader(c.status)
}

// sniff sets the Content-Type net/http would sniff from the first bytes
// written, when the handler set none (a handler that set it to nil asked
// for none), so that it is recorded as it went out. Once set, later
// writes find it set.
func (c *capture) sniff(first []byte) {
	if _, set := c.header["Content-Type"]; set || len(first) == 0 || !bodyAllowed(c.status) ||
		c.header.Get("Transfer-Encoding") != "" {
		return
	}
	c.header.Set("Content-Type", http.DetectContentType(first))
}

// bodyAllowed reports whether a response with status may have a body.
func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// Write sends b, or holds it, and records it while the body fits the
// limit.
func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.headerSent {
		c.sniff(b)
	}
	c.keep(b)
	if c.holding && (!c.overflow || !c.stream()) {
		c.held = append(c.held, b...)
		return len(b), nil
	}
	c.sendHeader()
	return c.w.Write(b)
}

// keep records b as the handler wrote it, while the body fits the limit.
func (c *capture) keep(b []byte) {
	if c.overflow {
		return
	}
	if len(c.body)+len(b) > c.limit {
		c.overflow, c.body = true, nil
		return
	}
	c.body = append(c.body, b...)
}

// Flush sends what is buffered, if the client's writer can.
func (c *capture) Flush() { _ = c.FlushError() }

// FlushError is Flush for http.ResponseController, with the error. A held
// response is flushed only if its key could be locked first (stream);
// otherwise it goes out once its record is written.
func (c *capture) FlushError() error {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.holding && !c.stream() {
		return nil
	}
	c.sendHeader()
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

// stream ends the holding of a response once pin has locked its key: what
// was held goes to the client, and the rest as it is written. It reports
// whether the response streams now.
func (c *capture) stream() bool {
	if c.pinTried || c.pin == nil {
		return false
	}
	c.pinTried = true
	if !c.pin(c.status) {
		return false
	}
	c.send()
	return true
}

// result is the response as the handler wrote it: a handler that wrote
// nothing sent an empty 200, with its headers as they are at the end.
func (c *capture) result() (status int, header http.Header) {
	if c.status == 0 {
		return http.StatusOK, c.w.Header().Clone()
	}
	return c.status, c.header
}

// send writes a held response to the client, with the headers as they
// were when its status was written.
// It sends a status not sent yet (a handler that wrote no body) too.
func (c *capture) send() {
	if !c.holding {
		c.sendHeader()
		return
	}
	c.holding = false
	c.sendHeader()
	if len(c.held) > 0 {
		_, _ = c.w.Write(c.held)
	}
	c.held = nil
}

// discard drops a held response, and the handler's headers with it, for
// the guard to answer in its place. It reports whether there was one.
func (c *capture) discard() bool {
	if !c.holding {
		return false
	}
	c.holding, c.held = false, nil
	c.resetHeader(nil)
	return true
}

// resetHeader makes the client's header map exactly h.
func (c *capture) resetHeader(h http.Header) {
	live := c.w.Header()
	for name := range live {
		delete(live, name)
	}
	for name, vs := range h {
		live[name] = slices.Clone(vs)
	}
}

// started reports whether the handler wrote a status or a byte.
func (c *capture) started() bool { return c.status != 0 }
