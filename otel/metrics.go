package idempayotel

import (
	"go.opentelemetry.io/otel/metric"
)

// instruments are the metrics every piece records into.
type instruments struct {
	operations metric.Int64Counter
	duration   metric.Float64Histogram
	requests   metric.Int64Counter
	store      metric.Float64Histogram
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	m := mp.Meter(ScopeName)
	var in instruments
	var err error
	if in.operations, err = m.Int64Counter("idempay.operations",
		metric.WithDescription("Operations ended, by operation and outcome."),
		metric.WithUnit("{operation}")); err != nil {
		return nil, err
	}
	if in.duration, err = m.Float64Histogram("idempay.operation.duration",
		metric.WithDescription("Time from an operation's call to its answer."),
		metric.WithUnit("s")); err != nil {
		return nil, err
	}
	if in.requests, err = m.Int64Counter("idempay.requests",
		metric.WithDescription("Requests sent to the provider: every attempt, retries included."),
		metric.WithUnit("{request}")); err != nil {
		return nil, err
	}
	if in.store, err = m.Float64Histogram("idempay.store.duration",
		metric.WithDescription("Time of each KeyStore call, by method."),
		metric.WithUnit("s")); err != nil {
		return nil, err
	}
	return &in, nil
}
