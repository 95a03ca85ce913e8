package idempayotel_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	idempayotel "github.com/idempay/idempay/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

const (
	secretSource = "tok_secret_card_4242"
	secretKey    = "sk_test_otel_secret"
)

// telemetry is one test's in-memory exporters.
type telemetry struct {
	spans   *tracetest.SpanRecorder
	tracers *sdktrace.TracerProvider
	reader  *sdkmetric.ManualReader
	meters  *sdkmetric.MeterProvider
}

func newTelemetry() *telemetry {
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tracers = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	return tel
}

func (tel *telemetry) opts() []idempayotel.Option {
	return []idempayotel.Option{idempayotel.WithTracerProvider(tel.tracers), idempayotel.WithMeterProvider(tel.meters)}
}

// instrumented is a client on srv with all three pieces in place.
func instrumented(t *testing.T, srv *idempaytest.Server, tel *telemetry, opts ...idempayotel.Option) *idempayotel.Client {
	t.Helper()
	all := append(tel.opts(), opts...)
	raw := idempaytest.NewClient(t, srv, func(cfg *idempay.Config) {
		cfg.HTTPClient = &http.Client{Transport: idempayotel.Transport(srv.Client().Transport, all...)}
		cfg.Store = idempayotel.Store(memstore.New(), all...)
	})
	c, err := idempayotel.New(raw, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestChargeWithARetryIsOneSpanWithTwoRequestSpans: the server charges and
// the answer is lost; the retry is answered by replay. One operation span
// says succeeded, replayed, two requests; two client spans are its children,
// numbered 1 and 2; the metrics count one charge and two requests.
func TestChargeWithARetryIsOneSpanWithTwoRequestSpans(t *testing.T) {
	srv := idempaytest.NewServer(idempaytest.WithSecret(secretKey))
	defer srv.Close()
	tel := newTelemetry()
	c := instrumented(t, srv, tel)

	srv.Fail("order-1", idempaytest.Post)
	req := idempaytest.Request("order-1", 1500)
	req.Source = idempay.Secret(secretSource)
	if _, err := c.Charge(context.Background(), req); err != nil {
		t.Fatalf("Charge: %v", err)
	}

	var op sdktrace.ReadOnlySpan
	var sent []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		switch {
		case s.Name() == "idempay.charge":
			op = s
		case s.SpanKind().String() == "client":
			sent = append(sent, s)
		}
	}
	if op == nil {
		t.Fatalf("no idempay.charge span among %d", len(tel.spans.Ended()))
	}
	a := attrs(op.Attributes())
	if got := a[idempayotel.AttrOutcome].AsString(); got != "succeeded" {
		t.Errorf("outcome %q, want succeeded", got)
	}
	if !a[idempayotel.AttrReplayed].AsBool() || a[idempayotel.AttrReplayedFrom].AsString() != string(idempay.ReplayFromServer) {
		t.Errorf("replayed %v from %q, want true from server", a[idempayotel.AttrReplayed], a[idempayotel.AttrReplayedFrom].AsString())
	}
	if got := a[idempayotel.AttrRequests].AsInt64(); got != 2 {
		t.Errorf("requests %d, want 2", got)
	}
	if len(sent) != 2 {
		t.Fatalf("%d request spans, want 2", len(sent))
	}
	for i, s := range sent {
		if s.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Errorf("request span %d is not a child of the charge span", i+1)
		}
		if got := attrs(s.Attributes())[idempayotel.AttrAttempt].AsInt64(); got != int64(i+1) {
			t.Errorf("request span %d says attempt %d", i+1, got)
		}
	}
	noSecretIn(t, tel.spans.Ended(), secretSource, secretKey)

	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if got := sumOf(rm, "idempay.operations", idempayotel.AttrOutcome, "succeeded"); got != 1 {
		t.Errorf("idempay.operations{succeeded} = %d, want 1", got)
	}
	if got := sumOf(rm, "idempay.requests", idempayotel.AttrOperation, "charge"); got != 2 {
		t.Errorf("idempay.requests{charge} = %d, want 2", got)
	}
	if got := countOf(rm, "idempay.store.duration", idempayotel.AttrStoreMethod, "reserve"); got < 1 {
		t.Errorf("idempay.store.duration{reserve} has %d records, want at least 1", got)
	}
}

// TestUnknownOutcomeIsAnErrorSpan: a server that always loses the answer
// ends the charge unknown; the span says so and carries the error status.
func TestUnknownOutcomeIsAnErrorSpan(t *testing.T) {
	srv := idempaytest.NewServer()
	defer srv.Close()
	tel := newTelemetry()
	c := instrumented(t, srv, tel)
	faults := make([]idempaytest.Fault, 20)
	for i := range faults {
		faults[i] = idempaytest.Mid
	}
	srv.Fail("order-2", faults...)
	_, err := c.Charge(context.Background(), idempaytest.Request("order-2", 1500))
	if idempay.OutcomeOf(err) != idempay.OutcomeUnknown {
		t.Fatalf("outcome %v (%v), want unknown", idempay.OutcomeOf(err), err)
	}
	for _, s := range tel.spans.Ended() {
		if s.Name() != "idempay.charge" {
			continue
		}
		if s.Status().Code != codes.Error {
			t.Errorf("span status %v, want Error", s.Status().Code)
		}
		var ce *idempay.ChargeError
		errors.As(err, &ce)
		if got := attrs(s.Attributes())[idempayotel.AttrRequests].AsInt64(); got != int64(ce.Requests) || got < 2 {
			t.Errorf("span says %d requests, the error %d", got, ce.Requests)
		}
		return
	}
	t.Fatal("no idempay.charge span")
}

// TestOpenIntentsGauge: an unknown charge leaves its intent open, and the
// gauge counts it.
func TestOpenIntentsGauge(t *testing.T) {
	srv := idempaytest.NewServer()
	defer srv.Close()
	tel := newTelemetry()
	c := instrumented(t, srv, tel, idempayotel.WithOpenIntents(100))
	faults := make([]idempaytest.Fault, 20)
	for i := range faults {
		faults[i] = idempaytest.Mid
	}
	srv.Fail("order-3", faults...)
	_, _ = c.Charge(context.Background(), idempaytest.Request("order-3", 1500))
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "idempay.open_intents" {
				found = len(g.DataPoints) == 1 && g.DataPoints[0].Value == 1
			}
		}
	}
	if !found {
		t.Error("idempay.open_intents did not report the one open intent")
	}
	// Settle the intent so that NewClient's cleanup finds no running charge.
	srv.Fail("order-3")
	_, _ = c.Charge(context.Background(), idempaytest.Request("order-3", 1500))
}

func noSecretIn(t *testing.T, spans []sdktrace.ReadOnlySpan, secrets ...string) {
	t.Helper()
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			for _, secret := range secrets {
				if strings.Contains(kv.Value.Emit(), secret) {
					t.Errorf("span %s attribute %s carries a secret", s.Name(), kv.Key)
				}
			}
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				for _, secret := range secrets {
					if strings.Contains(kv.Value.Emit(), secret) {
						t.Errorf("span %s event %s carries a secret", s.Name(), ev.Name)
					}
				}
			}
		}
	}
}

func sumOf(rm metricdata.ResourceMetrics, name string, key attribute.Key, value string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					if v, ok := dp.Attributes.Value(key); ok && v.AsString() == value {
						n += dp.Value
					}
				}
			}
		}
	}
	return n
}

func countOf(rm metricdata.ResourceMetrics, name string, key attribute.Key, value string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, dp := range h.DataPoints {
					if v, ok := dp.Attributes.Value(key); ok && v.AsString() == value {
						n += dp.Count
					}
				}
			}
		}
	}
	return n
}
