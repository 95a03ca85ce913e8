package idempay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bySource answers each request by the token it carries, so that a test
// can decline one card and accept another.
func bySource(answers map[string]step) step {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b struct {
			Token string `json:"omise_token"`
		}
		_ = json.Unmarshal(raw, &b)
		answers[b.Token](w, r)
	}
}

func withSource(id string, src idempay.Secret) idempay.ChargeRequest {
	r := order(id)
	r.Source = src
	return r
}

const declined402 = `{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds"}}`

// Rule: after a definite failure, another card on the same intent is a
// second attempt with a new key, durable before it is sent; the record
// keeps the first attempt; at most one attempt succeeds, and then answers
// every later charge of the intent.
func TestDeclineThenAnotherCardIsASecondAttempt(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, bySource(map[string]step{
		"tokn_declined": status(402, declined402),
		"tokn_good":     created("ch_second"),
	}))
	c := newClient(t, s.server.URL, store)
	ctx := context.Background()

	_, err := c.Charge(ctx, withSource("o", "tokn_declined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))

	ch, err := c.Charge(ctx, withSource("o", "tokn_good"))
	require.NoError(t, err)
	assert.Equal(t, "ch_second", ch.ID)
	assert.Equal(t, 2, ch.Attempt)
	keys := s.distinctKeys()
	assert.Len(t, keys, 2, "two attempts, two keys")

	rec, err := c.Record(ctx, "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, rec.State)
	assert.Equal(t, 2, rec.Attempt)
	require.Len(t, rec.History, 1)
	first := rec.History[0]
	assert.Equal(t, 1, first.Attempt)
	assert.Equal(t, idempay.StateFailed, first.State)
	assert.NotEqual(t, first.Key, rec.Key)
	assert.NotEqual(t, first.Fingerprint, rec.Fingerprint)
	assert.False(t, first.ClosedAt.IsZero())

	// The declined card again, or any other parameters: the paid intent
	// answers with its success, and nothing is sent.
	for _, src := range []idempay.Secret{"tokn_declined", "tokn_third"} {
		again, err := c.Charge(ctx, withSource("o", src))
		require.NoError(t, err)
		assert.Equal(t, "ch_second", again.ID)
		assert.True(t, again.ParamsDiffer)
		assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	}
	assert.Equal(t, int32(2), s.hits.Load())
}

// Rule: the same declined request is answered by its decline from the
// store; it does not begin a new attempt.
func TestSameDeclinedRequestIsNotAnotherAttempt(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(402, declined402))
	c := newClient(t, s.server.URL, store)
	for range 3 {
		_, err := c.Charge(context.Background(), order("o"))
		require.ErrorIs(t, err, idempay.ErrDeclined)
	}
	rec, _ := c.Record(context.Background(), "o")
	assert.Equal(t, 1, rec.Attempt)
	assert.Equal(t, int32(1), s.hits.Load())
}

// Rule: while an attempt is unknown or pending, money may still move under
// it: a charge with other parameters is refused, with that attempt's
// outcome, and nothing is sent.
func TestUnsettledAttemptBlocksAnother(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   step
		outcome idempay.Outcome
	}{
		{"unknown", drop, idempay.OutcomeUnknown},
		{"pending", status(202, `{"order_id":"o","charge_id":"ch_3ds","status":"pending","amount_jpy":1500}`), idempay.OutcomePending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			s := newStub(t, store, bySource(map[string]step{"tokn_a": tc.first, "tokn_b": created("never")}))
			c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
			_, err := c.Charge(context.Background(), withSource("o", "tokn_a"))
			require.Equal(t, tc.outcome, idempay.OutcomeOf(err))
			hits := s.hits.Load()

			_, err = c.Charge(context.Background(), withSource("o", "tokn_b"))
			assert.ErrorIs(t, err, idempay.ErrAttemptOpen)
			assert.Equal(t, tc.outcome, idempay.OutcomeOf(err))
			assert.Equal(t, hits, s.hits.Load(), "nothing sent")
		})
	}
}

// Rule: a caller's key names one attempt only; handing the key of a failed
// attempt to a new one would replay the failure, so it is refused.
func TestCallerKeyOfAFailedAttemptIsRefused(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, bySource(map[string]step{"tokn_a": status(402, declined402), "tokn_b": created("never")}))
	c := newClient(t, s.server.URL, store)
	first := withSource("o", "tokn_a")
	first.Key = "frontend-key-1"
	_, err := c.Charge(context.Background(), first)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	second := withSource("o", "tokn_b")
	second.Key = "frontend-key-1"
	_, err = c.Charge(context.Background(), second)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, int32(1), s.hits.Load())
}

// Rule: two instances racing to begin the next attempt of a failed intent
// with two cards: one attempt begins, the other is told an attempt is
// open; one charge.
func TestRacingNewAttemptsBeginOnce(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, bySource(map[string]step{
		"tokn_declined": status(402, declined402),
		"tokn_b":        func(w http.ResponseWriter, r *http.Request) { <-release; created("ch_b")(w, r) },
		"tokn_c":        func(w http.ResponseWriter, r *http.Request) { <-release; created("ch_c")(w, r) },
	}))
	a, b := newClient(t, s.server.URL, store), newClient(t, s.server.URL, store)
	_, err := a.Charge(context.Background(), withSource("o", "tokn_declined"))
	require.ErrorIs(t, err, idempay.ErrDeclined)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	ended := make(chan struct{}, 2)
	for i, c := range []*idempay.Client{a, b} {
		wg.Go(func() {
			_, errs[i] = c.Charge(context.Background(), withSource("o", idempay.Secret([]string{"tokn_b", "tokn_c"}[i])))
			ended <- struct{}{}
		})
	}
	// The one that began the attempt waits in the server until release;
	// the other must have been answered before it is let go, however the
	// goroutines are scheduled: released early, the winner could finish
	// before the loser reserved, and the loser would rightly be answered
	// the success instead of the open attempt.
	<-ended
	close(release)
	wg.Wait()
	ok, open := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case assert.ErrorIs(t, err, idempay.ErrAttemptOpen):
			open++
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, 1, open)
	assert.Equal(t, int32(2), s.hits.Load(), "the decline, then one second attempt")
}

// Rule: parameters an earlier attempt was declined with answer that
// decline again, even after another attempt came between; they never
// begin a new attempt (an Omise token would be sent twice). Simulator
// OPEN-3.
func TestADeclinedRequestStaysDeclinedAfterAnotherAttempt(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, bySource(map[string]step{
		"tokn_a": status(402, declined402),
		"tokn_b": status(402, declined402),
	}))
	c := newClient(t, s.server.URL, store)
	for _, src := range []idempay.Secret{"tokn_a", "tokn_b"} {
		_, err := c.Charge(context.Background(), withSource("o", src))
		require.ErrorIs(t, err, idempay.ErrDeclined)
	}
	_, err := c.Charge(context.Background(), withSource("o", "tokn_a"))
	require.ErrorIs(t, err, idempay.ErrDeclined, "card A's decline, again")
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, int32(2), s.hits.Load(), "nothing sent")
	rec, _ := c.Record(context.Background(), "o")
	assert.Equal(t, 2, rec.Attempt, "no third attempt")
}

// Rule: a caller's key names one attempt for good, even one that never
// reached the provider: its failure may already have been told under the
// key (a guarded BFF stores and replays the frontend's "declined"), so no
// later attempt may charge under it. Simulator: the checkout path, CK-1
// (a double click whose second request failed "not reached" and stored
// 402, while the first request's handler charged under the same key).
func TestACallerKeyNamesOneAttempt(t *testing.T) {
	store := memstore.New()
	var reached atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		if !reached.Load() {
			status(429, `{}`)(w, r) // attempt 1: never reached
			return
		}
		created("ch_2")(w, r)
	})
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	req := withSource("o", "tokn_a")
	req.Key = "frontend-key-0001"
	_, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrUnreachable)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	reached.Store(true)

	hits := s.hits.Load()
	_, err = c.Charge(context.Background(), req)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve, "the key's answer was failed, and stays so")
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, hits, s.hits.Load(), "nothing sent")

	req.Key = "frontend-key-0002"
	ch, err := c.Charge(context.Background(), req)
	require.NoError(t, err, "a new key begins attempt 2")
	assert.Equal(t, 2, ch.Attempt)
}

// closeFails fails the Resolve that closes a record as failed, once.
type closeFails struct {
	idempay.KeyStore
	once atomic.Bool
}

func (s *closeFails) Resolve(ctx context.Context, res idempay.Resolution) error {
	if res.State == idempay.StateFailed && s.once.CompareAndSwap(false, true) {
		return errors.New("store unreachable")
	}
	return s.KeyStore.Resolve(ctx, res)
}

// Rule: a decline the store could not record is not told as "failed":
// the caller would try another card and be refused for the open attempt.
// It is unknown, and the same request again is answered with the decline,
// which is then recorded. Simulator OPEN-5.
func TestADeclineNotRecordedIsUnknownUntilRecorded(t *testing.T) {
	mem := memstore.New()
	store := &closeFails{KeyStore: mem}
	s := newStub(t, mem, replayedDecline())
	c := newClient(t, s.server.URL, store)
	_, err := c.Charge(context.Background(), order("o"))
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.ErrorIs(t, err, idempay.ErrStore)

	_, err = c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	rec, _ := c.Record(context.Background(), "o")
	assert.Equal(t, idempay.StateFailed, rec.State)
}

// replayedDecline declines, and marks every answer after the first a
// replay, as a provider that stores the decline under the key does.
func replayedDecline() step {
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 {
			w.Header().Set("Idempotency-Replayed", "true")
		}
		status(402, declined402)(w, r)
	}
}
