package idempayotel

import (
	"context"

	"github.com/idempay/idempay"
	"go.opentelemetry.io/otel/metric"
)

// registerOpenIntents reports the client's open and pending intents at
// each collection, counted up to max so that one collection never pages
// through an unbounded store.
func registerOpenIntents(mp metric.MeterProvider, c *idempay.Client, max int) (metric.Registration, error) {
	m := mp.Meter(ScopeName)
	g, err := m.Int64ObservableGauge("idempay.open_intents",
		metric.WithDescription("Intents whose outcome is open or pending (money may move), capped at the configured count."),
		metric.WithUnit("{intent}"))
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		n, err := countOpen(ctx, c, max)
		if err != nil {
			return err
		}
		o.ObserveInt64(g, int64(n), metric.WithAttributes(AttrNamespace.String(c.Namespace())))
		return nil
	}, g)
}

func countOpen(ctx context.Context, c *idempay.Client, max int) (int, error) {
	n := 0
	for _, err := range c.Unresolved(ctx) {
		if err != nil {
			return n, err
		}
		if n++; n >= max {
			break
		}
	}
	return n, nil
}
