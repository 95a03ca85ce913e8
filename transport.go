package idempay

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"
)

// attemptTransport wraps the caller's RoundTripper so that every request on
// the wire is one attempt we count and classify.
//
// net/http re-sends by itself a request carrying an Idempotency-Key header
// when a kept-alive connection dies under it (Request.isReplayable): an
// attempt no counter would see. It does so only when the request can
// rebuild its body, or has none, so this transport hands it a copy without
// GetBody, and with the key under a spelling net/http does not look for
// when there is no body; every resend goes through our retry loop instead.
//
// Every answer's Date, a lookup's too, tells the client of the provider's
// clock (providerClock).
type attemptTransport struct {
	base   http.RoundTripper
	budget *retryBudget // the client's retry budget; nil for none
	clock  *providerClock
	now    func() time.Time // the holder's clock, read once an answer is in
}

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	probe := probeFrom(req.Context())
	if probe == nil {
		return t.answered(t.base.RoundTrip(req))
	}
	if probe.held != nil && !probe.held.mayStillSend() {
		// No lease time left: another flight may be sending this intent
		// by now, so not one byte of this attempt may leave.
		probe.notes.add(false)
		return nil, fmt.Errorf("%w: not sent", ErrLeaseLost)
	}
	if t.budget != nil && !probe.budget.admit(t.budget) {
		// Too many operations are being resent at once: this resend
		// stays home, and the flight ends on what it has (see conclude).
		probe.wrote.Store(false)
		probe.notes.add(false)
		return nil, fmt.Errorf("%w: resend not sent", ErrRetryBudgetExhausted)
	}
	if probe.sent != nil {
		probe.sent.Add(1)
	}
	note := probe.notes.add(true)
	probe.wrote.Store(false)
	trace := &httptrace.ClientTrace{
		// Once the headers are out, the server may act on the request:
		// from here on a lost answer means the outcome is unknown.
		WroteHeaders: func() { probe.wrote.Store(true) },
	}
	out := req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	out.GetBody = nil
	if out.Body == nil || out.Body == http.NoBody {
		hideKeysFromResend(out)
	}
	resp, err := t.answered(t.base.RoundTrip(out))
	if err == nil {
		probe.notes.answer(note, resp.StatusCode)
	}
	if t.budget != nil {
		probe.budget.answered(t.budget, resp, err)
	}
	return resp, err
}

// answered learns the provider's clock from an answer's Date.
func (t *attemptTransport) answered(resp *http.Response, err error) (*http.Response, error) {
	if err == nil && t.clock != nil {
		t.clock.observe(resp.Header, t.now())
	}
	return resp, err
}

// replayKeys are the headers net/http reads as "this POST may be resent"
// (Request.isReplayable), in the canonical spelling it looks them up by.
var replayKeys = []string{"Idempotency-Key", "X-Idempotency-Key"}

// hideKeysFromResend keeps net/http from resending a request that has no
// body (a capture, a cancel, a reverse): taking GetBody away does not stop
// that, since such a request needs none. The key headers are moved to their
// lower-case spelling: the same headers on the wire, where names are
// case-insensitive, but not the ones net/http looks for. The header map is
// copied first, so the caller's request is unchanged.
func hideKeysFromResend(r *http.Request) {
	moved := false
	for _, name := range replayKeys {
		if _, ok := r.Header[name]; ok {
			if !moved {
				r.Header = r.Header.Clone()
				moved = true
			}
			r.Header[strings.ToLower(name)] = r.Header[name]
			delete(r.Header, name)
		}
	}
}

// wireProbe records, for the attempt in progress, whether any of it was
// written, and counts the requests that went out. held, when set, is asked
// before each request leaves: the flight's lease must still be held.
type wireProbe struct {
	attempt int // the record's attempt the request is built for (AttemptOf)
	sent    *atomic.Int32
	wrote   atomic.Bool
	held    sender       // the flight: whether its lease still allows a send (an interface, not a method value: no allocation)
	budget  flightBudget // this flight's account with the client's retry budget
	notes   wireNotes    // each request as it left, for the journal
}

type probeKey struct{}

func withProbe(ctx context.Context, p *wireProbe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

func probeFrom(ctx context.Context) *wireProbe {
	p, _ := ctx.Value(probeKey{}).(*wireProbe)
	return p
}

// classifyTransportError says what a failed round trip means: a
// configuration error (bad certificate, unsupported scheme) is not retried;
// otherwise it depends on whether the request was written.
func classifyTransportError(err error, wrote bool) Kind {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr),
		errors.As(err, &invalidCert), strings.Contains(err.Error(), "unsupported protocol scheme"):
		return KindConfig
	case wrote:
		return KindLost
	}
	return KindNotSent
}

// wrapHTTPClient copies the caller's client (never mutating it) with the
// attempt transport over the client's retry budget (nil for none), learning
// the provider's clock into clock on the holder's clock now, and with
// redirects off: a charge answered by a redirect must not be followed by a
// GET that looks like its answer.
func wrapHTTPClient(hc *http.Client, budget *retryBudget, clock *providerClock, now func() time.Time) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *hc
	out.Transport = &attemptTransport{base: base, budget: budget, clock: clock, now: now}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// sender is what a probe asks before each request: the flight.
type sender interface{ mayStillSend() bool }
