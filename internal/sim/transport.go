package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// transport is an instance's network: an http.RoundTripper that hands
// each request to the fake's handler in process (no sockets: fast, and no
// kernel in the schedule), playing the request's fault on the way.
type transport struct {
	w    *world
	inst *instance
}

var (
	errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	errReset   = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
)

// sending is a charge request on the wire, for the concurrency check.
type sending struct {
	c     *call
	key   string
	held  bool      // its sender held the intent's lease when it left
	until time.Time // and until when
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := t.w
	var body []byte
	var err error
	if req.Body != nil {
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
	}
	c := callOf(req.Context())
	if err != nil || c == nil || c.o == nil {
		return nil, fmt.Errorf("sim: request outside a call (%v)", err)
	}
	if t.inst.dead.Load() {
		return nil, errRefused
	}
	rq := w.prov.inspect(req, body)
	n := c.nextAttempt(rq.charge || rq.op)
	f := w.drawFault(c, rq, n)
	if rq.op {
		f = w.opFault(c, rq, n)
		if !rq.opLookup {
			w.handOffOp(c, rq)
		}
	}
	var held bool
	var until time.Time
	if rq.charge {
		// The client's last check is behind it: what it hands over now
		// must carry a stored key under a held lease. A stall after this
		// (in the network stack) is beyond any client; the checks of the
		// moment the request is written judge what it causes.
		held, until = w.handOff(c, rq)
		w.maybePause(c, "before-write")
	}
	if err := req.Context().Err(); err != nil {
		w.aborted(c, rq, "before it was written", err)
		return nil, err
	}
	if t.inst.dead.Load() {
		return nil, errRefused
	}
	what := "LOOKUP"
	switch {
	case rq.charge:
		what = "SEND"
	case rq.opLookup:
		what = "LOOKUP-OP"
	case rq.op:
		what = "SEND-OP"
	}
	c.trace("%s #%d %s %s key=%s fault=%s", what, n, req.Method, req.URL.Path, rq.key, f)
	if f.refuse {
		return nil, errRefused
	}
	wroteHeaders(req)
	if rq.charge {
		s := w.leave(c, rq, held, until)
		defer w.arrived(c.intent(), s)
		w.maybePause(c, "after-write")
	}
	return t.exchange(c, rq, req, body, f)
}

// exchange plays the request once it is on the wire.
func (t *transport) exchange(c *call, rq reqInfo, req *http.Request, body []byte, f reqFault) (*http.Response, error) {
	w := t.w
	if f.synth != 0 {
		resp := w.synthesize(c, req, body, f)
		if t.inst.dead.Load() {
			return nil, errReset
		}
		return resp, nil
	}
	if f.pre {
		return nil, errReset
	}
	rec := w.deliver(c, rq, req, body, f.fake)
	switch err := req.Context().Err(); {
	case t.inst.dead.Load():
		c.trace("answer lost: the process died")
		return nil, errReset
	case err != nil:
		w.aborted(c, rq, "after it was written", err)
		return nil, err
	case rec.hijacked || f.post:
		c.trace("answer lost")
		return nil, errReset
	}
	if f.slow > 0 {
		w.clock.Advance(f.slow)
	}
	w.stamp(rec.h)
	return rec.response(req), nil
}

// deliver runs the provider's handler on the request and learns what it did.
func (w *world) deliver(c *call, rq reqInfo, req *http.Request, body []byte, f fakes.Fault) *recorder {
	if rq.charge && f != fakes.None {
		w.prov.inject(c.o, rq, f)
	}
	before := w.prov.charges(c.o)
	sreq := req.Clone(context.Background()) // servers carry on when clients leave
	sreq.Body = io.NopCloser(bytes.NewReader(body))
	sreq.RemoteAddr = "192.0.2.1:1234"
	rec := serve(w.prov.handler(), sreq)
	if rq.charge {
		w.noteProcessed(rq.key)
	}
	if out := w.prov.observe(c.o, rec.status, rec.body.Bytes()); out != nil {
		rec.body.Reset()
		rec.body.Write(out)
	}
	moved := ""
	if after := w.prov.charges(c.o); after > before {
		moved = fmt.Sprintf(" MONEY MOVED (%d charge(s) for the intent)", after)
	}
	c.trace("provider answered %d%s%s", rec.status, map[bool]string{true: " (connection dropped)"}[rec.hijacked], moved)
	return rec
}

// synthesize answers in the provider's place.
func (w *world) synthesize(c *call, req *http.Request, body []byte, f reqFault) *http.Response {
	status, b := w.prov.synth(f.synth, body)
	if f.synth == synthEcho {
		status, b = http.StatusBadGateway, echoPage(body, c.o.token(c.v), f.cut)
	}
	rec := &recorder{h: http.Header{}, status: status}
	rec.body.Write(b)
	if f.synth == synthRateLimit || f.synth == synthUnavailable {
		rec.h.Set("Retry-After", "1")
	}
	w.stamp(rec.h)
	return rec.response(req)
}

// stamp dates an answer as every server does, on the provider's clock:
// the world's true time, whatever the store's and the hosts' clocks read.
func (w *world) stamp(h http.Header) {
	h.Set("Date", w.clock.Now().UTC().Format(http.TimeFormat))
}

// aborted notes a request given up because its context ended; if that was
// its caller walking away, the flight was stopped by an impatient caller.
func (w *world) aborted(c *call, rq reqInfo, when string, err error) {
	c.trace("request abandoned %s: %v", when, err)
	if rq.charge && c.get().cancelled && errors.Is(err, context.Canceled) {
		w.or.report(checkImpatient, c.intent(), hintImpatient, "%s: the caller stopped waiting and the flight's request was abandoned %s; a charge about to be made became unknown", c.who(), when)
	}
}

func wroteHeaders(req *http.Request) {
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
}

func (w *world) noteProcessed(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A key the provider has forgotten is learnt again by the request that
	// executes it anew: its retention runs from then.
	if first, ok := w.processed[key]; key != "" && (!ok || w.clock.Now().Sub(first) >= providerRetention) {
		w.processed[key] = w.clock.Now()
	}
}

// recorder is the ResponseWriter the fakes write to; it can be hijacked,
// which is how a fake drops a connection.
type recorder struct {
	h        http.Header
	status   int
	body     bytes.Buffer
	wrote    bool
	hijacked bool
}

func (r *recorder) Header() http.Header { return r.h }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.hijacked = true
	a, b := net.Pipe()
	_ = b.Close()
	return a, bufio.NewReadWriter(bufio.NewReader(a), bufio.NewWriter(a)), nil
}

func serve(h http.Handler, req *http.Request) (rec *recorder) {
	rec = &recorder{h: http.Header{}}
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			rec.hijacked = true
		}
	}()
	h.ServeHTTP(rec, req)
	if !rec.wrote {
		rec.status = http.StatusOK
	}
	return rec
}

func (r *recorder) response(req *http.Request) *http.Response {
	b := r.body.Bytes()
	return &http.Response{StatusCode: r.status, Status: strconv.Itoa(r.status) + " " + http.StatusText(r.status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: r.h, ContentLength: int64(len(b)),
		Body: io.NopCloser(bytes.NewReader(b)), Request: req}
}
