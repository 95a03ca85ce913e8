// Package idempayotel reports what an idempay client does to OpenTelemetry:
// a span per operation (charge, settle, refund, capture, cancel), a child
// client span per request sent (otelhttp's, following the HTTP semantic
// conventions), and metrics for operations by outcome, requests sent, store
// latency and open intents.
//
// It lives in a module of its own, as go-redis keeps redisotel, so that
// programs which do not use OpenTelemetry never see it in their module
// graph.
//
// Three pieces, each optional:
//
//	hc := &http.Client{Transport: idempayotel.Transport(http.DefaultTransport)}
//	store := idempayotel.Store(filestoreStore)           // store latency
//	client, _ := idempay.New(idempay.Config{..., HTTPClient: hc, Store: store})
//	c, _ := idempayotel.New(client)                       // spans and outcome metrics
//	ch, err := c.Charge(ctx, req)                         // as client.Charge
//
// The client keeps the caller's context values on the flight it detaches,
// so each request's span is a child of the operation's span even when the
// caller stopped waiting.
//
// Never a secret: attributes carry the namespace, intent and operation IDs,
// the attempt, the outcome, whether the answer was replayed and the HTTP
// status; never the payment source, the credentials, a request or response
// body, or a header (otelhttp records none by default, and no option here
// adds one). Idempotency keys are not attributes either: they are opaque,
// unbounded in number and found in the store.
package idempayotel
