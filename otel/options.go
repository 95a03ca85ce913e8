package idempayotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName names the instrumentation scope of every span and instrument.
const ScopeName = "github.com/idempay/idempay/otel"

// Option configures New, Transport and Store.
type Option func(*config)

type config struct {
	tracers trace.TracerProvider
	meters  metric.MeterProvider
	openMax int
}

// WithTracerProvider sets where spans go. Default: otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracers = tp }
}

// WithMeterProvider sets where metrics go. Default: otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meters = mp }
}

// WithOpenIntents makes New report the gauge idempay.open_intents: the
// client's open and pending intents, counted through Client.Unresolved at
// each collection, up to max (a store with more reports max). Zero, the
// default, reports no gauge: counting pages through the store.
func WithOpenIntents(max int) Option {
	return func(c *config) { c.openMax = max }
}

func newConfig(opts []Option) config {
	c := config{tracers: otel.GetTracerProvider(), meters: otel.GetMeterProvider()}
	for _, o := range opts {
		o(&c)
	}
	return c
}
