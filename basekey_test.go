package idempay_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: one user action's key (a frontend's Idempotency-Key, as BaseKey)
// survives an outage: attempt 1 goes under the key itself; after a
// definite failure that reached nothing, the same action begins attempt 2
// under the key derived for it, never under attempt 1's key.
func TestBaseKeyBeginsTheNextAttemptUnderItsDerivedKey(t *testing.T) {
	store := memstore.New()
	var reached atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		if !reached.Load() {
			status(429, `{}`)(w, r) // the outage: nothing reached
			return
		}
		created("ch_2")(w, r)
	})
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	req := withSource("o", "tokn_a")
	req.BaseKey = "frontend-key-0001"
	_, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrUnreachable)
	reached.Store(true)

	ch, err := c.Charge(context.Background(), req)
	require.NoError(t, err, "the retry of the same action charges")
	assert.Equal(t, 2, ch.Attempt)
	assert.Equal(t, idempay.AttemptKey("frontend-key-0001", 2), ch.Key)
	assert.Equal(t, map[string]int{"frontend-key-0001": 1, ch.Key: 1}, s.distinctKeys())

	again, err := c.Charge(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, again.Replayed, "a third click is the replay")
	assert.Equal(t, ch.Key, again.Key)
}

// Rule: a decline is never retried under a derived key: the same action
// with the same card is answered the decline, and nothing is sent.
func TestBaseKeyNeverRetriesADecline(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(402, declined402), created("ch_2"))
	c := newClient(t, s.server.URL, store)
	req := withSource("o", "tokn_a")
	req.BaseKey = "frontend-key-0001"
	_, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	hits := s.hits.Load()
	_, err = c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, hits, s.hits.Load(), "nothing sent")
}

// Rule: Key and BaseKey are two ways of naming the key; a request gives
// at most one, and BaseKey is checked like Key.
func TestBaseKeyValidation(t *testing.T) {
	req := withSource("o", "tokn_a")
	req.Key, req.BaseKey = "frontend-key-0001", "frontend-key-0001"
	var ve *idempay.ValidationError
	require.ErrorAs(t, req.Validate(), &ve)
	assert.Equal(t, "BaseKey", ve.Field)
	req.Key, req.BaseKey = "", "bad key\n"
	require.ErrorAs(t, req.Validate(), &ve)
	assert.Equal(t, "BaseKey", ve.Field)
}

// Rule: attempt keys are a function of the base key and the attempt: the
// base itself for attempt 1, a valid key of its own for every later one,
// whatever the base's length.
func TestAttemptKey(t *testing.T) {
	for _, base := range []string{"frontend-key-0001", strings.Repeat("k", idempay.MaxKeyLength)} {
		assert.Equal(t, base, idempay.AttemptKey(base, 1))
		seen := map[string]bool{base: true}
		for n := 2; n <= 50; n++ {
			k := idempay.AttemptKey(base, n)
			require.NoError(t, idempay.ValidateKey(k))
			assert.Equal(t, k, idempay.AttemptKey(base, n), "deterministic")
			assert.False(t, seen[k], "attempt %d's key %q repeats an earlier one", n, k)
			seen[k] = true
		}
	}
	assert.NotEqual(t, idempay.AttemptKey("a", 2), idempay.AttemptKey("b", 2))
}
