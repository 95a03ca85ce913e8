package fakes

import (
	"net/http"
	"net/http/httptest"
)

// Loopback is the part of every fake server that is an httptest.Server: it
// serves the fake on a loopback port once started. The fakes embed it:
// their URL, Start, Client and Close are its. Make one with NewLoopback.
type Loopback struct {
	// URL is the base URL, "http://127.0.0.1:port", for
	// idempay.Config.BaseURL; empty until Start.
	URL string

	h  http.Handler
	ts *httptest.Server
}

// NewLoopback returns a Loopback that will serve h, not started.
func NewLoopback(h http.Handler) *Loopback { return &Loopback{h: h} }

// Start serves the fake on a loopback port. It panics if it cannot listen,
// as httptest.NewServer does, or if the server was started already.
func (l *Loopback) Start() {
	if l.ts != nil {
		panic("fakes: server already started")
	}
	l.ts = httptest.NewServer(l.h)
	l.URL = l.ts.URL
}

// Client returns an *http.Client that sends to the server, for
// idempay.Config.HTTPClient; before Start, http.DefaultClient. Close
// closes its idle connections.
func (l *Loopback) Client() *http.Client {
	if l.ts == nil {
		return http.DefaultClient
	}
	return l.ts.Client()
}

// Close stops the server and waits for the requests in progress, so that a
// fake's books are final when it returns. It is safe to call more than
// once, and before Start.
func (l *Loopback) Close() {
	if l.ts != nil {
		l.ts.Close()
	}
}
