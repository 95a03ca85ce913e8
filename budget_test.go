package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outageIntents is the size of the outage tests: the 1,000.
const outageIntents = 1000

// outageRetry keeps the outage tests' waits short; the budget, not the
// backoff, is what they measure.
var outageRetry = idempay.RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond,
	MaxElapsed: 30 * time.Second}

// countingTransport counts every request handed to the network.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// chargeAllDuringOutage charges n intents through a client over rt, with a
// few concurrent callers, and returns the outcomes.
func chargeAllDuringOutage(t *testing.T, baseURL string, rt http.RoundTripper, n int) map[idempay.Outcome]int {
	t.Helper()
	c, err := idempay.New(idempay.Config{BaseURL: baseURL, Store: memstore.New(), Retry: outageRetry,
		HTTPClient: &http.Client{Transport: rt, Timeout: 10 * time.Second}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	var (
		mu   sync.Mutex
		seen = map[idempay.Outcome]int{}
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("outage-%d", i),
					Amount: 1500, Currency: "JPY", Source: "tok_visa"})
				mu.Lock()
				seen[idempay.OutcomeOf(err)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return seen
}

// TestRetryBudgetHoldsDuringOutage5xx: a provider that answers 503 to
// everything gets close to one request per intent, not MaxAttempts per
// intent; every intent is unknown (a 5xx may have charged), none failed.
func TestRetryBudgetHoldsDuringOutage5xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rt := &countingTransport{base: srv.Client().Transport}
	seen := chargeAllDuringOutage(t, srv.URL, rt, outageIntents)
	perIntent := float64(rt.n.Load()) / outageIntents
	t.Logf("outage (503 to every request): %d intents, %d requests, %.3f requests per intent, outcomes %v",
		outageIntents, rt.n.Load(), perIntent, seen)
	assert.LessOrEqual(t, perIntent, 1.1, "requests per intent during a total outage")
	assert.Equal(t, outageIntents, seen[idempay.OutcomeUnknown], "a 5xx may have charged: every intent is unknown")
}

// TestRetryBudgetHoldsDuringOutageRefused: a provider that refuses every
// connection. Nothing can have arrived, so every intent is failed, and
// the budget keeps the connection attempts close to one per intent.
func TestRetryBudgetHoldsDuringOutageRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now: every dial is refused
	rt := &countingTransport{base: &http.Transport{}}
	seen := chargeAllDuringOutage(t, "http://"+addr, rt, outageIntents)
	perIntent := float64(rt.n.Load()) / outageIntents
	t.Logf("outage (connection refused): %d intents, %d requests, %.3f requests per intent, outcomes %v",
		outageIntents, rt.n.Load(), perIntent, seen)
	assert.LessOrEqual(t, perIntent, 1.1, "requests per intent during a total outage")
	assert.Equal(t, outageIntents, seen[idempay.OutcomeFailed], "nothing arrived: every intent failed")
}

// TestRetryBudgetRefusalOutcome: an operation the empty budget stops is
// failed only when nothing of it was sent, and unknown once a request
// that may have arrived went out; the error says the budget stopped it.
func TestRetryBudgetRefusalOutcome(t *testing.T) {
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	// A budget that allows exactly one retry, and then none.
	policy := outageRetry
	policy.BudgetTokens, policy.RetryCost = 5, 5
	c, err := idempay.New(idempay.Config{BaseURL: srv.URL, Store: memstore.New(), Retry: policy})
	require.NoError(t, err)
	defer c.Close(context.Background())
	charge := func(id string) (*idempay.ChargeError, int) {
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: id, Amount: 100, Currency: "USD", Source: "tok"})
		var ce *idempay.ChargeError
		require.ErrorAs(t, err, &ce)
		return ce, ce.Requests
	}

	status.Store(http.StatusServiceUnavailable)
	ce, sent := charge("spends-the-budget")
	assert.Equal(t, idempay.OutcomeUnknown, ce.Outcome)
	assert.Equal(t, 2, sent, "the first request and the one retry the budget allows")
	assert.ErrorIs(t, ce, idempay.ErrRetryBudgetExhausted)

	ce, sent = charge("5xx-then-refused")
	assert.Equal(t, idempay.OutcomeUnknown, ce.Outcome, "a 503 may have charged: never failed")
	assert.Equal(t, 1, sent)
	assert.ErrorIs(t, ce, idempay.ErrRetryBudgetExhausted)

	status.Store(http.StatusTooManyRequests) // refused before the part that moves money
	ce, sent = charge("429-then-refused")
	assert.Equal(t, idempay.OutcomeFailed, ce.Outcome, "nothing that could move money was sent")
	assert.Equal(t, 1, sent)
	assert.True(t, errors.Is(ce, idempay.ErrRetryBudgetExhausted), "%v", ce)
}

// TestRetryBudgetRefills: successes give tokens back, so after an outage
// ends the client retries again.
func TestRetryBudgetRefills(t *testing.T) {
	var fail atomic.Bool
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() && n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"charge_id":"ch_%s","status":"succeeded","amount":100,"currency":"usd"}`, r.Header.Get("Idempotency-Key"))
	}))
	defer srv.Close()
	policy := outageRetry
	policy.BudgetTokens, policy.RetryCost, policy.SuccessRefill = 10, 5, 1
	c, err := idempay.New(idempay.Config{BaseURL: srv.URL, Store: memstore.New(), Retry: policy})
	require.NoError(t, err)
	defer c.Close(context.Background())
	fail.Store(true)
	for i := range 2 { // two retries empty the bucket; each success after a retry refunds its cost
		_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: fmt.Sprintf("r%d", i), Amount: 100, Currency: "USD", Source: "tok"})
		require.NoError(t, err, "a retry the refunded budget allows")
	}
	assert.Equal(t, 10, c.RetryBudget().Available, "a retry that succeeded gives its cost back")
}
