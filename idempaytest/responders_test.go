package idempaytest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mockBase = "https://pay.example"

// mocked returns a client whose requests all go to a fresh MockTransport,
// with responder answering the charge endpoint.
func mocked(t *testing.T, responder httpmock.Responder) (*idempay.Client, *httpmock.MockTransport) {
	t.Helper()
	mock := httpmock.NewMockTransport()
	mock.RegisterResponder(http.MethodPost, mockBase+idempaytest.ChargePath, responder)
	c, err := idempay.New(idempay.Config{BaseURL: mockBase, Store: memstore.New(),
		HTTPClient: &http.Client{Transport: mock}, Retry: idempaytest.FastRetry()})
	require.NoError(t, err)
	return c, mock
}

func TestChargeResponderEchoesTheRequest(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.ChargeResponder("ch_1"))
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.Equal(t, "ch_1", ch.ID)
	assert.EqualValues(t, 1500, ch.Amount)
	assert.False(t, ch.Replayed)
	assert.Equal(t, 1, ch.Requests)

	var body map[string]any
	require.NoError(t, json.Unmarshal(ch.Raw, &body))
	assert.Equal(t, map[string]any{"order_id": "order-1", "charge_id": "ch_1", "status": "succeeded",
		"amount_jpy": 1500.0}, body)
	assert.Equal(t, 1, mock.GetTotalCallCount())
}

// A pending answer is the pending outcome: the charge and ErrPending, the
// intent kept open, and a later charge answered without a second request.
func TestPendingResponderIsPending(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.PendingResponder("ch_3ds"))
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch)
	assert.Equal(t, "ch_3ds", ch.ID)
	assert.Equal(t, idempay.StatePending, ch.State)
	assert.Equal(t, "pending", ch.Status)
	assert.EqualValues(t, 1500, ch.Amount)
	rec, err := c.Record(ctx, "order-1")
	require.NoError(t, err)
	assert.Equal(t, idempay.StatePending, rec.State)

	again, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "a pending charge is never sent again")
}

func TestChargeResponderEchoesTheKeyAndToleratesBadBodies(t *testing.T) {
	t.Parallel()
	req, err := http.NewRequest(http.MethodPost, mockBase, strings.NewReader("not json"))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := idempaytest.ChargeResponder("ch_1")(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "k1", resp.Header.Get("Idempotency-Key"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	b, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, `{"order_id":"","charge_id":"ch_1","status":"succeeded","amount_jpy":0}`, string(b))

	req, _ = http.NewRequest(http.MethodPost, mockBase, nil)
	resp, err = idempaytest.ChargeResponder("ch_2")(req)
	require.NoError(t, err, "no body at all")
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
}

func TestReplayResponder(t *testing.T) {
	t.Parallel()
	c, _ := mocked(t, idempaytest.ReplayResponder("ch_1"))
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.True(t, ch.Replayed)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
}

// Stripe's spelling is one HeaderSet away, and the default OwnAPI reads it.
func TestReplayHeaderSpellingViaHeaderSet(t *testing.T) {
	t.Parallel()
	c, _ := mocked(t, idempaytest.ChargeResponder("ch_1").HeaderSet(http.Header{"Idempotent-Replayed": {"true"}}))
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
}

func TestDeclineResponder(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.DeclineResponder("insufficient_funds"))
	_, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusPaymentRequired, apiErr.Status)
	assert.Equal(t, "card_declined", apiErr.Code)
	assert.Equal(t, "insufficient_funds", apiErr.DeclineCode)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, 1, mock.GetTotalCallCount(), "a decline is not retried")
}

func TestInFlightResponder(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.InFlightResponder())
	_, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrInProgress)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, idempaytest.FastRetry().MaxAttempts, mock.GetTotalCallCount(), "409 is retried")
}

func TestInFlightThenCharged(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.InFlightResponder().Then(idempaytest.ReplayResponder("ch_1")))
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
	assert.Equal(t, 2, mock.GetTotalCallCount())
}

func TestKeyReusedResponder(t *testing.T) {
	t.Parallel()
	c, mock := mocked(t, idempaytest.KeyReusedResponder())
	_, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrKeyConflict)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, 1, mock.GetTotalCallCount(), "a key conflict is not retried")
}

func TestUnavailableResponder(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{0: "0", time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2"} {
		req, _ := http.NewRequest(http.MethodPost, mockBase, nil)
		resp, err := idempaytest.UnavailableResponder(d)(req)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, want, resp.Header.Get("Retry-After"), "%v rounds up to whole seconds", d)
	}
	assert.Panics(t, func() { idempaytest.UnavailableResponder(-time.Second) })

	// Retried, waiting no more than FastRetry's cap for a Retry-After of 5 s.
	c, mock := mocked(t, idempaytest.UnavailableResponder(5*time.Second).Then(idempaytest.ChargeResponder("ch_1")))
	start := time.Now()
	ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.NoError(t, err)
	assert.False(t, ch.Replayed, "the 503 came before anything was claimed")
	assert.Equal(t, 2, mock.GetTotalCallCount())
	assert.Less(t, time.Since(start), 2*time.Second)
}

// A dropped answer may have charged: the client retries with the same
// key, and if nothing is ever answered the outcome is unknown, not failed.
func TestDropResponder(t *testing.T) {
	t.Parallel()
	t.Run("every answer lost", func(t *testing.T) {
		t.Parallel()
		c, mock := mocked(t, idempaytest.DropResponder())
		_, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
		require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
		require.ErrorIs(t, err, idempaytest.ErrDropped)
		require.ErrorIs(t, err, io.EOF)
		assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
		assert.Equal(t, idempaytest.FastRetry().MaxAttempts, mock.GetTotalCallCount())
	})
	t.Run("lost then replayed", func(t *testing.T) {
		t.Parallel()
		var keys []string
		record := func(next httpmock.Responder) httpmock.Responder {
			return func(r *http.Request) (*http.Response, error) {
				keys = append(keys, r.Header.Get("Idempotency-Key")) // requests are sequential
				return next(r)
			}
		}
		c, _ := mocked(t, record(idempaytest.DropResponder()).Then(record(idempaytest.ReplayResponder("ch_1"))))
		ch, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
		require.NoError(t, err)
		assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
		assert.Equal(t, 2, ch.Requests)
		require.Len(t, keys, 2)
		assert.Equal(t, keys[0], keys[1], "the retry carried the same key")
	})
	t.Run("consumes the body", func(t *testing.T) {
		t.Parallel()
		body := &trackingBody{Reader: bytes.NewReader([]byte(`{}`))}
		req, _ := http.NewRequest(http.MethodPost, mockBase, body)
		_, err := idempaytest.DropResponder()(req)
		require.ErrorIs(t, err, idempaytest.ErrDropped)
		assert.True(t, body.closed)
		assert.Zero(t, body.Len())
	})
}

// An error responder without the trace hooks is a connection never made:
// the contrast that makes DropResponder necessary.
func TestErrorResponderIsUnreachableNotLost(t *testing.T) {
	t.Parallel()
	c, _ := mocked(t, httpmock.NewErrorResponder(errors.New("dial tcp: connection refused")))
	_, err := c.Charge(ctx, idempaytest.Request("order-1", 1500))
	require.ErrorIs(t, err, idempay.ErrUnreachable)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
}

type trackingBody struct {
	*bytes.Reader
	closed bool
}

func (b *trackingBody) Close() error {
	b.closed = true
	return nil
}
