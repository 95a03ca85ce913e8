package idempayotel_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	idempayotel "github.com/idempay/idempay/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A client whose charges and requests are spans. In a service, pass your
// SDK's providers (or none: the global ones).
func ExampleNew() {
	api := idempaytest.NewServer()
	defer api.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	client, err := idempay.New(idempay.Config{
		BaseURL:    api.URL,
		HTTPClient: &http.Client{Transport: idempayotel.Transport(api.Client().Transport, idempayotel.WithTracerProvider(tp))},
		Store:      idempayotel.Store(memstore.New()),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close(context.Background())
	c, err := idempayotel.New(client, idempayotel.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	api.Fail("order-1", idempaytest.Post) // charged, the answer lost: one retry
	if _, err := c.Charge(context.Background(), idempaytest.Request("order-1", 1500)); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// HTTP POST client
	// HTTP POST client
	// idempay.charge internal
}
