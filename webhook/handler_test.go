package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

// countingStore counts Reserve calls, to show what never reaches the store.
type countingStore struct {
	idempay.KeyStore
	reserves atomic.Int32
}

func (s *countingStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	s.reserves.Add(1)
	return s.KeyStore.Reserve(ctx, r)
}

type hooked struct {
	status int
	err    error
}

// fixture is a Stripe Handler over a counting memstore, with the test
// clock and an error hook that keeps what it saw.
type fixture struct {
	h     *webhook.Handler
	store *countingStore
	clk   *fakes.Clock
	mu    sync.Mutex
	hooks []hooked
}

func newFixture(t *testing.T, fn webhook.HandlerFunc, opts ...webhook.HandlerOption) *fixture {
	t.Helper()
	clk := newClock()
	f := &fixture{store: &countingStore{KeyStore: memstore.New(memstore.WithClock(clk.Now))}, clk: clk}
	v, err := webhook.NewStripe(stripeSecret, webhook.WithClock(f.clk.Now))
	require.NoError(t, err)
	d := newDeduper(t, f.store, f.clk)
	hook := webhook.WithErrorHook(func(_ *http.Request, status int, err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.hooks = append(f.hooks, hooked{status, err})
	})
	f.h, err = webhook.NewHandler(v, d, fn, append([]webhook.HandlerOption{hook}, opts...)...)
	require.NoError(t, err)
	return f
}

func (f *fixture) post(body []byte, header http.Header) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, idempaytest.WebhookRequest("/webhooks/stripe", body, header))
	return w
}

func (f *fixture) lastHook() hooked {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.hooks) == 0 {
		return hooked{}
	}
	return f.hooks[len(f.hooks)-1]
}

func TestHandlerAnswers(t *testing.T) {
	t.Parallel()
	body := idempaytest.StripeEvent("evt_1", "charge.succeeded", nil)
	var seen []webhook.Event
	f := newFixture(t, func(_ context.Context, ev webhook.Event) error {
		seen = append(seen, ev)
		return nil
	})
	signed := func(b []byte) http.Header { return idempaytest.SignStripeWebhook(b, stripeSecret, f.clk.Now()) }

	w := f.post(body, signed(body))
	require.Equal(t, 200, w.Code)
	require.Equal(t, "handled\n", w.Body.String())
	require.Len(t, seen, 1)
	require.Equal(t, "evt_1", seen[0].ID)
	require.Equal(t, body, seen[0].Body, "the raw bytes, not re-encoded")
	require.NotEmpty(t, seen[0].Header.Get(webhook.StripeSignatureHeader))

	w = f.post(body, signed(body)) // Stripe signs each delivery anew
	require.Equal(t, 200, w.Code)
	require.Equal(t, "duplicate\n", w.Body.String())
	require.Len(t, seen, 1)

	reservesBefore := f.store.reserves.Load()
	for _, c := range []struct {
		name   string
		body   []byte
		header http.Header
		status int
		want   error
	}{
		{"tampered", []byte(strings.Replace(string(body), "evt_1", "evt_2", 1)), signed(body), 400, webhook.ErrBadSignature},
		{"unsigned", body, http.Header{}, 400, webhook.ErrNoSignature},
		{"stale", body, idempaytest.SignStripeWebhook(body, stripeSecret, f.clk.Now().Add(-time.Hour)), 400, webhook.ErrTimestamp},
		{"signed but not JSON", []byte("hello"), signed([]byte("hello")), 400, webhook.ErrNoEventID},
		{"signed JSON without id", []byte(`{"object":"event"}`), signed([]byte(`{"object":"event"}`)), 400, webhook.ErrNoEventID},
		{"id not a string", []byte(`{"id":42}`), signed([]byte(`{"id":42}`)), 400, webhook.ErrNoEventID},
		{"id with spaces", []byte(`{"id":"evt 1"}`), signed([]byte(`{"id":"evt 1"}`)), 400, webhook.ErrNoEventID},
	} {
		w := f.post(c.body, c.header)
		require.Equal(t, c.status, w.Code, c.name)
		require.ErrorIs(t, f.lastHook().err, c.want, c.name)
		require.Equal(t, c.status, f.lastHook().status, c.name)
	}
	require.Equal(t, reservesBefore, f.store.reserves.Load(), "nothing unverified or unparsable reaches the store")
}

func TestHandlerHTTPLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(context.Context, webhook.Event) error { return nil }, webhook.WithMaxBody(64))

	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/webhooks/stripe", nil))
	require.Equal(t, 405, w.Code)
	require.Equal(t, "POST", w.Header().Get("Allow"))

	big := idempaytest.StripeEvent("evt_1", "charge.succeeded", map[string]string{"pad": strings.Repeat("x", 100)})
	w = f.post(big, idempaytest.SignStripeWebhook(big, stripeSecret, f.clk.Now()))
	require.Equal(t, 413, w.Code)
	require.ErrorIs(t, f.lastHook().err, webhook.ErrTooLarge)
	require.Zero(t, f.store.reserves.Load())
}

// Rule: a handler error is 500 with a fixed phrase (its text goes to the
// hook only), and the provider's redelivery is processed.
func TestHandlerErrorThenRedeliveryOverHTTP(t *testing.T) {
	t.Parallel()
	body := idempaytest.StripeEvent("evt_1", "charge.succeeded", nil)
	var fail atomic.Bool
	fail.Store(true)
	var runs atomic.Int32
	f := newFixture(t, func(context.Context, webhook.Event) error {
		runs.Add(1)
		if fail.Load() {
			return errors.New("ledger db password rejected for user payments")
		}
		return nil
	})

	w := f.post(body, idempaytest.SignStripeWebhook(body, stripeSecret, f.clk.Now()))
	require.Equal(t, 500, w.Code)
	require.Equal(t, "handler failed\n", w.Body.String())
	require.Contains(t, f.lastHook().err.Error(), "password rejected")

	fail.Store(false)
	f.clk.Advance(10 * time.Second) // the provider's next attempt, freshly signed
	w = f.post(body, idempaytest.SignStripeWebhook(body, stripeSecret, f.clk.Now()))
	require.Equal(t, 200, w.Code)
	require.EqualValues(t, 2, runs.Load())
}

// Rule: 32 concurrent deliveries of one event to a real HTTP server run
// the handler once: one 200, 31 answers 409, then 200 duplicates.
func TestHandlerConcurrentDeliveriesOverHTTP(t *testing.T) {
	t.Parallel()
	const n = 32
	body := idempaytest.StripeEvent("evt_1", "charge.succeeded", nil)
	release := make(chan struct{})
	var runs atomic.Int32
	f := newFixture(t, func(ctx context.Context, _ webhook.Event) error {
		runs.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("never released")
		}
	})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	header := idempaytest.SignStripeWebhook(body, stripeSecret, f.clk.Now())
	post := func() int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			return -1
		}
		req.Header = header.Clone()
		resp, err := srv.Client().Do(req)
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	codes := make(chan int, n)
	for range n {
		go func() { codes <- post() }()
	}
	for range n - 1 {
		require.Equal(t, 409, recv(t, codes))
	}
	close(release)
	require.Equal(t, 200, recv(t, codes))
	require.Equal(t, 200, post())
	require.EqualValues(t, 1, runs.Load())
}

func TestHandlerOmiseEndToEnd(t *testing.T) {
	t.Parallel()
	clk := newClock()
	v, err := webhook.NewOmise(omiseSecret, webhook.WithClock(clk.Now))
	require.NoError(t, err)
	d, err := webhook.NewDeduper(memstore.New(), "omise", "acct_th", webhook.WithClock(clk.Now))
	require.NoError(t, err)
	var ids []string
	h, err := webhook.NewHandler(v, d, func(_ context.Context, ev webhook.Event) error {
		ids = append(ids, ev.ID)
		return nil
	})
	require.NoError(t, err)

	body := idempaytest.OmiseEvent("evnt_test_1", "charge.complete", map[string]string{"object": "charge", "id": "chrg_test_1"})
	for _, want := range []string{"handled\n", "duplicate\n"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, idempaytest.WebhookRequest("/webhooks/omise", body, idempaytest.SignOmiseWebhook(body, omiseSecret, clk.Now())))
		require.Equal(t, 200, w.Code)
		require.Equal(t, want, w.Body.String())
	}
	require.Equal(t, []string{"evnt_test_1"}, ids)
}

func TestHandlerWithEventID(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":{"uuid":"0b6c1a52-4f0e-4c8e-9d3a-2f3c4b5a6d7e"}}`)
	var got string
	f := newFixture(t, func(_ context.Context, ev webhook.Event) error { got = ev.ID; return nil },
		webhook.WithEventID(func(b []byte) (string, error) {
			if bytes.Contains(b, []byte("broken")) {
				return "", errors.New("no uuid")
			}
			if bytes.Contains(b, []byte("spaced")) {
				return "a b", nil
			}
			return "0b6c1a52-4f0e-4c8e-9d3a-2f3c4b5a6d7e", nil
		}))
	w := f.post(body, idempaytest.SignStripeWebhook(body, stripeSecret, f.clk.Now()))
	require.Equal(t, 200, w.Code)
	require.Equal(t, "0b6c1a52-4f0e-4c8e-9d3a-2f3c4b5a6d7e", got)

	for _, b := range [][]byte{[]byte(`{"broken":1}`), []byte(`{"spaced":1}`)} {
		w = f.post(b, idempaytest.SignStripeWebhook(b, stripeSecret, f.clk.Now()))
		require.Equal(t, 400, w.Code)
		require.ErrorIs(t, f.lastHook().err, webhook.ErrNoEventID)
	}
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 200},
		{fmt.Errorf("x: %w", webhook.ErrNotRecorded), 200},
		{webhook.ErrNoSignature, 400},
		{webhook.ErrBadSignature, 400},
		{&webhook.TimestampError{}, 400},
		{webhook.ErrNoEventID, 400},
		{webhook.ErrInProgress, 409},
		{webhook.ErrTooLarge, 413},
		{webhook.ErrEventMismatch, 422},
		{&webhook.HandlerError{EventID: "evt_1", Err: webhook.ErrBadSignature}, 500}, // the handler's own error is still a failure
		{errors.New("store down"), 500},
	} {
		require.Equal(t, c.want, webhook.HTTPStatus(c.err), "%v", c.err)
	}
}

func TestNewHandlerRefuses(t *testing.T) {
	t.Parallel()
	v, err := webhook.NewStripe(stripeSecret)
	require.NoError(t, err)
	d := newDeduper(t, nil, newClock())
	fn := func(context.Context, webhook.Event) error { return nil }
	for _, c := range []struct {
		v    webhook.Verifier
		d    *webhook.Deduper
		fn   webhook.HandlerFunc
		opts []webhook.HandlerOption
	}{
		{nil, d, fn, nil},
		{v, nil, fn, nil},
		{v, d, nil, nil},
		{v, d, fn, []webhook.HandlerOption{webhook.WithMaxBody(0)}},
		{v, d, fn, []webhook.HandlerOption{webhook.WithEventID(nil)}},
		{v, d, fn, []webhook.HandlerOption{webhook.WithErrorHook(nil)}},
		{v, d, fn, []webhook.HandlerOption{nil}},
	} {
		_, err := webhook.NewHandler(c.v, c.d, c.fn, c.opts...)
		require.Error(t, err)
	}
}
