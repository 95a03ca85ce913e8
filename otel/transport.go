package idempayotel

import (
	"context"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// call is what an operation's span shares with the requests it sends.
type call struct {
	op   string
	sent atomic.Int64
}

type callKey struct{}

func withCall(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, callKey{}, &call{op: op})
}

// Transport returns base (http.DefaultTransport if nil) instrumented with
// otelhttp: each request sent is a client span, a child of its operation's
// span when the Client of this package made the call, with
// idempay.operation and idempay.attempt (the request's number within the
// call: 1, then each retry) as attributes, and counted in idempay.requests.
func Transport(base http.RoundTripper, opts ...Option) http.RoundTripper {
	cfg := newConfig(opts)
	if base == nil {
		base = http.DefaultTransport
	}
	in, err := newInstruments(cfg.meters)
	if err != nil {
		in = nil // a meter that refuses instruments: spans only
	}
	counted := &countingTransport{base: base, in: in}
	return otelhttp.NewTransport(counted,
		otelhttp.WithTracerProvider(cfg.tracers), otelhttp.WithMeterProvider(cfg.meters))
}

// countingTransport runs inside otelhttp's span, so it can label it.
type countingTransport struct {
	base http.RoundTripper
	in   *instruments
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	op := "unknown"
	if c, ok := r.Context().Value(callKey{}).(*call); ok {
		op = c.op
		n := c.sent.Add(1)
		trace.SpanFromContext(r.Context()).SetAttributes(AttrOperation.String(op), AttrAttempt.Int64(n))
	}
	if t.in != nil {
		t.in.requests.Add(r.Context(), 1, metric.WithAttributes(AttrOperation.String(op)))
	}
	return t.base.RoundTrip(r)
}
