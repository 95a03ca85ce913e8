package idempay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// stub is a scripted own-API server. Each request takes the next step of
// the script (the last step repeats); every request is checked against the
// store: the key it carries must already be reserved for its intent.
type stub struct {
	t      *testing.T
	store  idempay.KeyStore
	ns     string
	mu     sync.Mutex
	steps  []step
	keys   []string // the key of every request, in order
	hits   atomic.Int32
	server *httptest.Server
}

type step func(w http.ResponseWriter, r *http.Request)

func newStub(t *testing.T, store idempay.KeyStore, steps ...step) *stub {
	s := &stub{t: t, store: store, ns: "ownapi:default", steps: steps}
	s.server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.server.Close)
	return s
}

func (s *stub) serve(w http.ResponseWriter, r *http.Request) {
	n := int(s.hits.Add(1))
	key := r.Header.Get("Idempotency-Key")
	var body struct {
		OrderID string `json:"order_id"`
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	_ = json.Unmarshal(raw, &body)
	rec, err := s.store.Load(context.Background(), s.ns, body.OrderID)
	if err != nil || rec.Key != key {
		s.t.Errorf("request %d for %q arrived with key %q before the store held it (store: %q, %v)", n, body.OrderID, key, rec.Key, err)
	}
	s.mu.Lock()
	s.keys = append(s.keys, key)
	st := s.steps[min(n, len(s.steps))-1]
	s.mu.Unlock()
	st(w, r)
}

func (s *stub) distinctKeys() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for _, k := range s.keys {
		m[k]++
	}
	return m
}

func created(id string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_"+id)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"order_id":"o","charge_id":%q,"status":"succeeded","amount_jpy":1500}`, id)
	}
}

func replayed(header string, st step) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(header, "true")
		st(w, r)
	}
}

func status(code int, body string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// drop reads the request and closes the connection: the answer is lost.
func drop(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func fastRetry() idempay.RetryPolicy {
	return idempay.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond,
		MaxElapsed: 10 * time.Second}
}

func newClient(t testing.TB, url string, store idempay.KeyStore, mods ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	cfg := idempay.Config{BaseURL: url, Store: store, Retry: fastRetry()}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	return c
}

func order(id string) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: id, Amount: 1500, Currency: "JPY", Source: "tokn_test_visa"}
}

func TestChargeSucceeds(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("ch_1"))
	c := newClient(t, s.server.URL, store)

	ch, err := c.Charge(context.Background(), order("order-1"))
	require.NoError(t, err)
	assert.Equal(t, "ch_1", ch.ID)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, int64(1500), ch.Amount)
	assert.Equal(t, "JPY", ch.Currency)
	assert.Equal(t, "req_ch_1", ch.RequestID)
	assert.Equal(t, 1, ch.Requests)
	assert.False(t, ch.Replayed)
	assert.Len(t, ch.Key, 36, "a UUID v4 key")
	assert.Equal(t, map[string]int{ch.Key: 1}, s.distinctKeys())

	rec, err := store.Load(context.Background(), c.Namespace(), "order-1")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, "ch_1", rec.ProviderRef)
	assert.Empty(t, rec.LeaseOwner, "the lease is released once settled")
}

func TestReplayHeaderBothSpellings(t *testing.T) {
	for _, h := range []string{"Idempotency-Replayed", "Idempotent-Replayed"} {
		t.Run(h, func(t *testing.T) {
			store := memstore.New()
			s := newStub(t, store, replayed(h, created("ch_r")))
			ch, err := newClient(t, s.server.URL, store).Charge(context.Background(), order("o"))
			require.NoError(t, err)
			assert.True(t, ch.Replayed)
			assert.Equal(t, idempay.ReplayFromServer, ch.ReplayedFrom)
		})
	}
}

func TestRetriesKeepOneKey(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(503, ""), drop, status(500, "{}"), status(409, `{"error":{"code":"idempotency_key_in_use"}}`),
		replayed("Idempotency-Replayed", created("ch_2")))
	ch, err := newClient(t, s.server.URL, store).Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, 5, ch.Requests)
	assert.Equal(t, int32(5), s.hits.Load(), "the attempt count is what the server saw")
	assert.Equal(t, map[string]int{ch.Key: 5}, s.distinctKeys(), "one key over every attempt")
	assert.True(t, ch.Replayed)
}

func TestReplayedServerErrorStopsAtOnce(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, replayed("Idempotent-Replayed", status(500, `{"error":{"type":"api_error"}}`)))
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.Error(t, err)
	assert.Equal(t, int32(1), s.hits.Load(), "a stored failure is not asked again")
	assert.ErrorIs(t, err, idempay.ErrStoredFailure)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.Status)
	assert.True(t, apiErr.Replayed)
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, idempay.StateOpen, rec.State, "the key stays open for a later settlement")
}

func TestNeverRetried(t *testing.T) {
	cases := []struct {
		name     string
		code     int
		body     string
		sentinel error
		outcome  idempay.Outcome
	}{
		{"400 validation", 400, `{"error":{"type":"invalid_request_error","param":"amount_jpy"}}`, idempay.ErrInvalidRequest, idempay.OutcomeFailed},
		{"401", 401, `{"detail":"bad key"}`, idempay.ErrConfig, idempay.OutcomeFailed},
		{"402 decline", 402, `{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds"}}`, idempay.ErrDeclined, idempay.OutcomeFailed},
		{"403", 403, `{}`, idempay.ErrConfig, idempay.OutcomeFailed},
		{"404", 404, `{}`, idempay.ErrConfig, idempay.OutcomeFailed},
		{"422 key re-used", 422, `{"error":{"type":"idempotency_error"}}`, idempay.ErrKeyConflict, idempay.OutcomeUnknown},
		{"400 Stripe idempotency_error", 400, `{"error":{"type":"idempotency_error"}}`, idempay.ErrKeyConflict, idempay.OutcomeUnknown},
		{"501", 501, ``, idempay.ErrConfig, idempay.OutcomeFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			s := newStub(t, store, status(tc.code, tc.body))
			_, err := newClient(t, s.server.URL, store).Charge(context.Background(), order("o"))
			assert.Equal(t, int32(1), s.hits.Load(), "not retried")
			assert.ErrorIs(t, err, tc.sentinel)
			assert.Equal(t, tc.outcome, idempay.OutcomeOf(err))
			var apiErr *idempay.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.Status)
		})
	}
}

func TestDeclineIsStoredAndReplayedLocally(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(402, `{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline"}}`))
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrDeclined)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "generic_decline", apiErr.DeclineCode)
	assert.Equal(t, int32(1), s.hits.Load(), "the stored decline answers without a request")
}

func TestSettledIntentAnswersFromStore(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("ch_3"))
	c := newClient(t, s.server.URL, store)
	first, err := c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	again, err := c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, int32(1), s.hits.Load())
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, first.Key, again.Key)
	assert.True(t, again.Replayed)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Zero(t, again.Requests)
}

func TestInFlightPastBudgetIsInProgress(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(409, `{"error":{"code":"idempotency_key_in_use"}}`))
	_, err := newClient(t, s.server.URL, store).Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrInProgress)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, int32(5), s.hits.Load(), "retried up to MaxAttempts")
}

func TestRateLimitedThroughoutIsFailedNotUnknown(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(429, `{}`))
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrUnreachable)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "429 is refused before processing")
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, idempay.StateFailed, rec.State, "a failed attempt is recorded as failed")

	// The next try, same parameters, begins a second attempt: the first
	// key never reached the provider, a new one is as good.
	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrUnreachable)
	rec, _ = store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, 2, rec.Attempt)
	require.Len(t, rec.History, 1)
	assert.NotEqual(t, rec.History[0].Key, rec.Key)
}

func TestConnectionRefusedIsFailed(t *testing.T) {
	store := memstore.New()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	_, err := newClient(t, url, store).Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrUnreachable)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var ce *idempay.ChargeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 5, ce.Requests)
}

func TestUnknownThenResumeWithSameKey(t *testing.T) {
	store := memstore.New()
	var healthy atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			drop(w, r)
			return
		}
		replayed("Idempotency-Replayed", created("ch_4"))(w, r)
	})
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "answers lost after writing: money may have moved")
	var unresolved []idempay.Record
	for rec, err := range c.Unresolved(context.Background()) {
		require.NoError(t, err)
		unresolved = append(unresolved, rec)
	}
	require.Len(t, unresolved, 1)

	healthy.Store(true)
	ch, err := c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, unresolved[0].Key, ch.Key, "resumed with the stored key")
	assert.Len(t, s.distinctKeys(), 1)
	assert.True(t, ch.Replayed)
}

// TestPaidIntentAnswersItsSuccessWhateverTheParameters: a double click
// that arrives with a new frontend key, or another card for an order
// already paid, is answered by the success, from the store.
func TestPaidIntentAnswersItsSuccessWhateverTheParameters(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("ch_5"))
	c := newClient(t, s.server.URL, store)
	first, err := c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	other := order("o")
	other.Amount = 9999
	other.Source = "tokn_other_card"
	withKey := order("o")
	withKey.Key = "another-key"
	for _, req := range []idempay.ChargeRequest{other, withKey} {
		ch, err := c.Charge(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, idempay.OutcomeSucceeded, idempay.OutcomeOf(err))
		assert.Equal(t, first.ID, ch.ID)
		assert.Equal(t, first.Key, ch.Key)
		assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom)
		assert.Equal(t, req.Amount != first.Amount, ch.ParamsDiffer)
	}
	assert.Equal(t, int32(1), s.hits.Load(), "nothing sent for a paid intent")
}

func TestCallerSuppliedKeyIsUsed(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("ch_6"))
	req := order("o")
	req.Key = "frontend-key-123"
	ch, err := newClient(t, s.server.URL, store).Charge(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "frontend-key-123", ch.Key)
	assert.Equal(t, map[string]int{"frontend-key-123": 1}, s.distinctKeys())
}

func TestExpiredKeyIsNeverResent(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	store := memstore.New(memstore.WithClock(clock)) // ages are read on the store's clock
	s := newStub(t, store, drop)
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	sent := s.hits.Load()

	now.Add(int64(23*time.Hour + time.Second))
	_, err = c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, sent, s.hits.Load(), "no request after the retention window")
}

func TestConcurrentChargesOfOneIntentShareOneFlight(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created("ch_7")(w, r)
	})
	c := newClient(t, s.server.URL, store)
	var wg sync.WaitGroup
	results := make([]*idempay.Charge, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := c.Charge(context.Background(), order("o"))
			assert.NoError(t, err)
			results[i] = ch
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), s.hits.Load(), "one request for twenty callers")
	for _, ch := range results {
		require.NotNil(t, ch)
		assert.Equal(t, "ch_7", ch.ID)
	}
}

func TestAnotherInstanceHoldsTheLease(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created("ch_8")(w, r)
	})
	a := newClient(t, s.server.URL, store)
	b := newClient(t, s.server.URL, store) // another instance sharing the store
	done := make(chan error)
	go func() {
		_, err := a.Charge(context.Background(), order("o"))
		done <- err
	}()
	for s.hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := b.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrInProgress)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, int32(1), s.hits.Load(), "the second instance sent nothing")
	close(release)
	require.NoError(t, <-done)
	ch, err := b.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom, "once settled, every instance answers from the store")
}

func TestContextCancelledDuringBackoffReturnsQuickly(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(503, ""))
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
		cfg.Retry = idempay.RetryPolicy{InitialInterval: 10 * time.Second, MaxInterval: 10 * time.Second, NoJitter: true,
			MaxElapsed: 300 * time.Millisecond}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var cancelledAt time.Time
	go func() {
		for s.hits.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // well inside the 10 s backoff
		cancelledAt = time.Now()
		cancel()
	}()
	_, err := c.Charge(ctx, order("o"))
	elapsed := time.Since(cancelledAt)
	assert.Less(t, elapsed, 50*time.Millisecond, "returned %v after the cancel", elapsed)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "a 503 may have been produced mid-way")
	assert.ErrorIs(t, err, idempay.ErrStoppedWaiting)
	assert.Equal(t, int32(1), s.hits.Load())
}

func TestRetryAfterHonouredAndCapped(t *testing.T) {
	run := func(cap time.Duration) time.Duration {
		store := memstore.New()
		s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		}, created("ch_9"))
		c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxRetryAfter = cap })
		start := time.Now()
		_, err := c.Charge(context.Background(), order("o"))
		require.NoError(t, err)
		return time.Since(start)
	}
	assert.GreaterOrEqual(t, run(10*time.Second), time.Second, "Retry-After: 1 is waited for")
	assert.Less(t, run(100*time.Millisecond), 700*time.Millisecond, "and capped")
}

// TestNoSilentResendOnKeptAliveConnection: net/http would re-send a
// request with an Idempotency-Key by itself when a reused connection dies
// before the answer; the client must count every request the server sees.
func TestNoSilentResendOnKeptAliveConnection(t *testing.T) {
	store := memstore.New()
	var dropped atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			OrderID string `json:"order_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		if b.OrderID == "second" && dropped.CompareAndSwap(false, true) {
			drop(w, r)
			return
		}
		created("ch_"+b.OrderID)(w, r)
	})
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("first")) // leaves a kept-alive connection
	require.NoError(t, err)
	before := s.hits.Load()
	ch, err := c.Charge(context.Background(), order("second"))
	require.NoError(t, err)
	assert.Equal(t, s.hits.Load()-before, int32(ch.Requests), "attempts counted = requests received")
	assert.Equal(t, 2, ch.Requests)
}

func TestWaiterStopsWaitingOnItsOwnContext(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created("ch_w")(w, r)
	})
	c := newClient(t, s.server.URL, store)
	leader := make(chan error)
	go func() {
		_, err := c.Charge(context.Background(), order("o"))
		leader <- err
	}()
	for s.hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Charge(ctx, order("o"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "a waiter that gives up cannot know the outcome")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-leader, "the flight went on for the caller that started it")
	assert.Equal(t, int32(1), s.hits.Load())
}

func TestBadGeneratedKeyIsRefused(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("never"))
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.NewKey = func() string { return "bad key" } })
	_, err := c.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrConfig)
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Zero(t, s.hits.Load())
}

// TestNoSilentResendOfABodilessPost: a POST without a body (a capture, a
// cancel, a reverse) is one net/http would resend by itself on a dead
// kept-alive connection even without GetBody, since it needs none; the
// Client must still count every request the server sees.
func TestNoSilentResendOfABodilessPost(t *testing.T) {
	store := memstore.New()
	var seen atomic.Int32
	var dropped atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := seen.Add(1)
		if n == 2 && dropped.CompareAndSwap(false, true) { // the second request: its answer is lost
			drop(w, r)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"order_id":"o","charge_id":"ch_%d","status":"succeeded","amount_jpy":1500}`, n)
	}))
	defer srv.Close()
	empty := idempay.OwnAPI{Encode: func(idempay.ChargeRequest) ([]byte, string, error) { return nil, "application/json", nil }}
	c := newClient(t, srv.URL, store, func(cfg *idempay.Config) { cfg.Provider = empty })
	_, err := c.Charge(context.Background(), order("first")) // leaves a kept-alive connection
	require.NoError(t, err)
	before := seen.Load()
	ch, err := c.Charge(context.Background(), order("second"))
	require.NoError(t, err)
	assert.Equal(t, seen.Load()-before, int32(ch.Requests), "attempts counted = requests received")
	assert.Equal(t, 2, ch.Requests)
}
