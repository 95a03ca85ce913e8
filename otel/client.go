package idempayotel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys set on operation spans, request spans and metrics.
const (
	AttrOperation    = attribute.Key("idempay.operation")     // charge, settle, refund, capture, cancel
	AttrNamespace    = attribute.Key("idempay.namespace")     // provider and account
	AttrIntent       = attribute.Key("idempay.intent_id")     // the caller's order ID
	AttrOpID         = attribute.Key("idempay.op_id")         // a refund's, capture's or cancel's ID
	AttrOutcome      = attribute.Key("idempay.outcome")       // succeeded, pending, failed, unknown
	AttrReplayed     = attribute.Key("idempay.replayed")      // the answer came from an earlier execution
	AttrReplayedFrom = attribute.Key("idempay.replayed_from") // server, store, lookup
	AttrRequests     = attribute.Key("idempay.requests")      // requests this call sent
	AttrAttempt      = attribute.Key("idempay.attempt")       // the intent's attempt (a span per operation), or the request's number within the call (a span per request)
	AttrStatus       = attribute.Key("http.response.status_code")
)

// Client is an idempay.Client that reports each call as a span and in the
// operation metrics. It answers exactly what the wrapped client answers.
type Client struct {
	c   *idempay.Client
	tr  trace.Tracer
	in  *instruments
	reg metric.Registration
}

var _ idempay.Charger = (*Client)(nil)

// New wraps c. Give c an HTTPClient whose transport is Transport, so that
// each request is a child span of its operation's.
func New(c *idempay.Client, opts ...Option) (*Client, error) {
	if c == nil {
		return nil, errors.New("idempayotel: nil client")
	}
	cfg := newConfig(opts)
	in, err := newInstruments(cfg.meters)
	if err != nil {
		return nil, fmt.Errorf("idempayotel: %w", err)
	}
	w := &Client{c: c, tr: cfg.tracers.Tracer(ScopeName), in: in}
	if cfg.openMax > 0 {
		if w.reg, err = registerOpenIntents(cfg.meters, c, cfg.openMax); err != nil {
			return nil, fmt.Errorf("idempayotel: %w", err)
		}
	}
	return w, nil
}

// Unwrap returns the wrapped client, for the calls this type does not
// instrument (Close, Record, Ledger, Unresolved, ...).
func (w *Client) Unwrap() *idempay.Client { return w.c }

// Stop unregisters the open-intents gauge, if any.
func (w *Client) Stop() error {
	if w.reg == nil {
		return nil
	}
	return w.reg.Unregister()
}

// Charge is idempay.Client.Charge, in a span named "idempay.charge".
func (w *Client) Charge(ctx context.Context, req idempay.ChargeRequest) (*idempay.Charge, error) {
	ctx, done := w.start(ctx, "charge", AttrIntent.String(req.IntentID))
	ch, err := w.c.Charge(ctx, req)
	done(chargeAttrs(ch), err)
	return ch, err
}

// Settle is idempay.Client.Settle, in a span named "idempay.settle".
func (w *Client) Settle(ctx context.Context, intentID string) (*idempay.Charge, error) {
	ctx, done := w.start(ctx, "settle", AttrIntent.String(intentID))
	ch, err := w.c.Settle(ctx, intentID)
	done(chargeAttrs(ch), err)
	return ch, err
}

// Refund is idempay.Client.Refund, in a span named "idempay.refund".
func (w *Client) Refund(ctx context.Context, req idempay.RefundRequest) (*idempay.Operation, error) {
	ctx, done := w.start(ctx, "refund", AttrIntent.String(req.IntentID), AttrOpID.String(req.RefundID))
	op, err := w.c.Refund(ctx, req)
	done(opAttrs(op), err)
	return op, err
}

// Capture is idempay.Client.Capture, in a span named "idempay.capture".
func (w *Client) Capture(ctx context.Context, req idempay.CaptureRequest) (*idempay.Operation, error) {
	ctx, done := w.start(ctx, "capture", AttrIntent.String(req.IntentID), AttrOpID.String(req.CaptureID))
	op, err := w.c.Capture(ctx, req)
	done(opAttrs(op), err)
	return op, err
}

// Cancel is idempay.Client.Cancel, in a span named "idempay.cancel".
func (w *Client) Cancel(ctx context.Context, req idempay.CancelRequest) (*idempay.Operation, error) {
	ctx, done := w.start(ctx, "cancel", AttrIntent.String(req.IntentID), AttrOpID.String(req.CancelID))
	op, err := w.c.Cancel(ctx, req)
	done(opAttrs(op), err)
	return op, err
}

// start opens the operation's span and puts the request counter the
// Transport reads into ctx; the function it returns ends both.
func (w *Client) start(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, func([]attribute.KeyValue, error)) {
	begun := time.Now()
	attrs = append(attrs, AttrOperation.String(op), AttrNamespace.String(w.c.Namespace()))
	ctx, span := w.tr.Start(ctx, "idempay."+op, trace.WithAttributes(attrs...))
	ctx = withCall(ctx, op)
	return ctx, func(result []attribute.KeyValue, err error) {
		outcome := idempay.OutcomeOf(err)
		end := append(result, AttrOutcome.String(outcome.String()))
		if n, ok := requestsIn(err); ok {
			end = append(end, AttrRequests.Int(n))
		}
		if status := statusOf(err); status != 0 {
			end = append(end, AttrStatus.Int(status))
		}
		span.SetAttributes(end...)
		switch outcome {
		case idempay.OutcomeFailed, idempay.OutcomeUnknown:
			span.RecordError(err)
			span.SetStatus(codes.Error, outcome.String())
		}
		span.End()
		set := metric.WithAttributes(AttrOperation.String(op), AttrOutcome.String(outcome.String()),
			AttrReplayed.Bool(replayedIn(result)))
		w.in.operations.Add(ctx, 1, set)
		w.in.duration.Record(ctx, time.Since(begun).Seconds(), set)
	}
}

func chargeAttrs(ch *idempay.Charge) []attribute.KeyValue {
	if ch == nil {
		return []attribute.KeyValue{AttrReplayed.Bool(false)}
	}
	return []attribute.KeyValue{AttrReplayed.Bool(ch.Replayed), AttrReplayedFrom.String(string(ch.ReplayedFrom)),
		AttrAttempt.Int(ch.Attempt), AttrRequests.Int(ch.Requests)}
}

func opAttrs(op *idempay.Operation) []attribute.KeyValue {
	if op == nil {
		return []attribute.KeyValue{AttrReplayed.Bool(false)}
	}
	return []attribute.KeyValue{AttrReplayed.Bool(op.Replayed), AttrReplayedFrom.String(string(op.ReplayedFrom)),
		AttrAttempt.Int(op.Attempt), AttrRequests.Int(op.Requests)}
}

func replayedIn(attrs []attribute.KeyValue) bool {
	for _, a := range attrs {
		if a.Key == AttrReplayed {
			return a.Value.AsBool()
		}
	}
	return false
}

// requestsIn is the count of requests a failed or unsettled call sent, as
// its error reports it (the same count Charge.Requests gives a success).
func requestsIn(err error) (int, bool) {
	var ce *idempay.ChargeError
	if errors.As(err, &ce) {
		return ce.Requests, true
	}
	var oe *idempay.OpError
	if errors.As(err, &oe) {
		return oe.Requests, true
	}
	return 0, false
}

// statusOf is the provider's HTTP status in err's chain, or 0.
func statusOf(err error) int {
	var api *idempay.APIError
	if errors.As(err, &api) {
		return api.Status
	}
	return 0
}
