package idempay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostTwice charges an intent whose two attempts are both charged by the
// server and both answers lost: the outcome is unknown, the money moved.
func lostTwice(t *testing.T, c *idempay.Client, api *refserver.Server, id string) {
	t.Helper()
	api.InjectOrder(id, refserver.Post, refserver.Post)
	_, err := c.Charge(context.Background(), order(id))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
}

func TestSettleByLookupDoesNotResend(t *testing.T) {
	store := memstore.New()
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
		cfg.Retry.MaxAttempts = 2
	})
	lostTwice(t, c, api, "o-settle")
	posts := api.Stats().Requests

	ch, err := c.Settle(context.Background(), "o-settle")
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, posts, api.Stats().Requests, "settled without a charge request")
	assert.Equal(t, 1, api.Stats().Lookups)
	assert.Equal(t, 1, api.Ledger().Count("o-settle"))
	rec, _ := c.Record(context.Background(), "o-settle")
	assert.Equal(t, idempay.StateSucceeded, rec.State)

	again, err := c.Charge(context.Background(), order("o-settle"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
}

func TestSettleNotFoundStaysUnknown(t *testing.T) {
	store := memstore.New()
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
		cfg.Retry.MaxAttempts = 2
	})
	api.InjectOrder("o-none", refserver.Pre, refserver.Pre) // lost before the server acted
	_, err := c.Charge(context.Background(), order("o-none"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	_, err = c.Settle(context.Background(), "o-none")
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "not found by lookup is not settled: the key may still be resent")
	rec, _ := c.Record(context.Background(), "o-none")
	assert.Equal(t, idempay.StateOpen, rec.State)
}

func TestSettleWithoutLookupSaysSo(t *testing.T) {
	store := memstore.New()
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 2 })
	lostTwice(t, c, api, "o-x")
	_, err := c.Settle(context.Background(), "o-x")
	assert.ErrorIs(t, err, idempay.ErrNoLookup)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	_, err = c.Settle(context.Background(), "never-charged")
	assert.ErrorIs(t, err, idempay.ErrNotFound)
}

func TestExpiredKeySettledByLookup(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	store := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
		cfg.Retry.MaxAttempts = 2
	})
	lostTwice(t, c, api, "o-old")
	posts := api.Stats().Requests
	now.Add(int64(48 * time.Hour))
	ch, err := c.Charge(context.Background(), order("o-old"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, posts, api.Stats().Requests, "an expired key is never resent")
	assert.Equal(t, 1, api.Ledger().Count("o-old"))
}

func TestPendingChargeIsKeptAndAnsweredFromStore(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, status(202, `{"order_id":"o","charge_id":"ch_p","status":"pending","amount_jpy":1500}`))
	c := newClient(t, s.server.URL, store)
	ch, err := c.Charge(context.Background(), order("o-pending"))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err), "pending is not succeeded")
	require.NotNil(t, ch, "a pending charge comes with what the customer must be shown")
	assert.Equal(t, idempay.StatePending, ch.State)
	rec, _ := c.Record(context.Background(), "o-pending")
	assert.Equal(t, idempay.StatePending, rec.State)
	assert.Equal(t, "ch_p", rec.ProviderRef, "the provider's charge ID is kept to tie the callback back")
	again, err := c.Charge(context.Background(), order("o-pending"))
	require.ErrorIs(t, err, idempay.ErrPending)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, int32(1), s.hits.Load())
}

// guardedOwnAPI is the own API treated as a provider that does not
// de-duplicate by key: the client must look up before any resend.
type guardedOwnAPI struct{ idempay.OwnAPI }

func (guardedOwnAPI) LookupBeforeResend() bool { return true }

func TestLookupBeforeResendSettlesInsteadOfResending(t *testing.T) {
	store := memstore.New()
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = guardedOwnAPI{idempay.OwnAPI{LookupPath: refserver.DefaultPath}}
	})
	api.InjectOrder("o-guard", refserver.Post) // charged, answer lost
	ch, err := c.Charge(context.Background(), order("o-guard"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, "o-guard", ch.IntentID)
	assert.NotEmpty(t, ch.Key)
	assert.Equal(t, 1, api.Stats().Requests, "no resend: the lookup found the charge")
	assert.Equal(t, 1, api.Stats().Lookups)

	api.InjectOrder("o-guard2", refserver.Pre) // lost before anything happened
	ch, err = c.Charge(context.Background(), order("o-guard2"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Requests, "not found by lookup: resent with the same key")
	assert.Len(t, api.Stats().KeysByOrder["o-guard2"], 1)
	assert.Equal(t, 1, api.Ledger().Count("o-guard2"))
}

func TestPendingStaysPendingWhenTheLookupCannotTell(t *testing.T) {
	var posts, gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			w.WriteHeader(http.StatusNotFound) // the provider has nothing to say yet
			return
		}
		posts.Add(1)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"order_id":"o","charge_id":"ch_pend","status":"pending","amount_jpy":1500}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, memstore.New(), func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: "/payments/charge"}
	})
	first, err := c.Charge(context.Background(), order("o-p"))
	require.ErrorIs(t, err, idempay.ErrPending)
	require.Equal(t, idempay.StatePending, first.State)

	again, err := c.Charge(context.Background(), order("o-p"))
	require.ErrorIs(t, err, idempay.ErrPending, "a lookup that finds nothing leaves a pending charge pending")
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	assert.Equal(t, idempay.StatePending, again.State)
	assert.Equal(t, "ch_pend", again.ID)
	assert.Equal(t, idempay.ReplayFromStore, again.ReplayedFrom)
	assert.Equal(t, int32(1), posts.Load(), "a pending charge is never resent")
	assert.Equal(t, int32(1), gets.Load(), "it was looked up")
}

// Rule: past KeyRetention a key is never resent; if the provider's lookup
// proves that nothing was charged under it, the attempt is failed and the
// next charge begins a new attempt with a new key, instead of leaving the
// intent unknown for ever.
func TestExpiredKeyProvenUnchargedBeginsANewAttempt(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	store := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
		cfg.Retry.MaxAttempts = 2
	})
	api.InjectOrder("o-gone", refserver.Pre, refserver.Pre) // never reached the server
	_, err := c.Charge(context.Background(), order("o-gone"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	first, _ := c.Record(context.Background(), "o-gone")
	posts := api.Stats().Requests

	now.Add(int64(48 * time.Hour))
	_, err = c.Charge(context.Background(), order("o-gone"))
	assert.ErrorIs(t, err, idempay.ErrKeyExpired)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "the lookup proved no charge")
	assert.Equal(t, posts, api.Stats().Requests, "the expired key was not resent")

	ch, err := c.Charge(context.Background(), order("o-gone"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Attempt)
	assert.NotEqual(t, first.Key, ch.Key, "a new attempt, a new key")
	assert.Equal(t, 1, api.Ledger().Count("o-gone"))
}

// Rule: a caller's key that was sent and then expired may not name the
// next attempt, even once a lookup proved nothing was charged under it:
// the provider may still hold it, and its age would restart from the new
// attempt (found by the simulator, OPEN-6).
func TestExpiredCallerKeyIsNotTakenAgain(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	store := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
		cfg.Retry.MaxAttempts = 2
	})
	req := order("o-key")
	req.Key = "frontend-key-0001"
	api.InjectOrder("o-key", refserver.Pre, refserver.Pre)
	_, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	now.Add(int64(48 * time.Hour))
	_, err = c.Charge(context.Background(), req)
	require.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "the lookup proved no charge")

	posts := api.Stats().Requests
	_, err = c.Charge(context.Background(), req)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve, "the expired key may not name attempt 2")
	assert.Equal(t, "Key", ve.Field)
	assert.Equal(t, posts, api.Stats().Requests)
}

// Rule: Settle of a pending charge whose lookup cannot tell (here a 503)
// answers the stored pending charge, as Charge does: a caller switching on
// OutcomePending always has the page to show. Simulator OPEN-1.
func TestSettlePendingWithAFailedLookupKeepsTheCharge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"order_id":"o","charge_id":"ch_3ds","status":"pending","amount_jpy":1500}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, memstore.New(), func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: "/payments/charge"}
	})
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrPending)
	ch, err := c.Settle(context.Background(), "o")
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch, "the pending charge comes with a pending outcome")
	assert.Equal(t, "ch_3ds", ch.ID)
}

// Rule: Settle under a running flight's lease records a success (which
// closes the intent for good) but never a pending or failed outcome, whose
// record would free the lease to another sender. Simulator OPEN-7.
func TestSettleUnderARunningFlightRecordsOnlySuccess(t *testing.T) {
	store := memstore.New()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusOK) // the provider says pending
			io.WriteString(w, `{"order_id":"o","charge_id":"ch_p","status":"pending","amount_jpy":1500}`)
			return
		}
		posts.Add(1)
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // the flight's answer never comes
	}))
	defer srv.Close()
	lookup := func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: "/payments/charge"}
		cfg.Retry.MaxElapsed = 500 * time.Millisecond // the held flight ends soon after the test
	}
	a, b := newClient(t, srv.URL, store, lookup), newClient(t, srv.URL, store, lookup)
	ctx, cancel := context.WithCancel(context.Background())
	go a.Charge(ctx, order("o"))
	require.Eventually(t, func() bool { return posts.Load() == 1 }, 5*time.Second, time.Millisecond)

	_, err := a.Settle(context.Background(), "o")
	assert.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err), "the lookup's answer")
	rec, _ := store.Load(context.Background(), a.Namespace(), "o")
	assert.Equal(t, idempay.StateOpen, rec.State, "nothing recorded under the flight's lease")
	assert.NotEmpty(t, rec.LeaseOwner, "the flight keeps its lease")
	_, err = b.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrInProgress, "another instance still may not send")
	assert.Equal(t, int32(1), posts.Load())
	cancel()
	require.NoError(t, a.Close(context.Background()))
}

// Rule: once a Settle under a running flight's lease has recorded the
// success (which frees the lease), the flight sends nothing more: every
// resend renews the lease first, and the renewal is refused. The flight
// answers the recorded success. Simulator seed 3738 (lease-at-send).
func TestNoResendAfterSettleRecordedTheSuccess(t *testing.T) {
	store := memstore.New()
	var posts atomic.Int32
	first, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"order_id":"o","charge_id":"ch_ok","status":"succeeded","amount_jpy":1500}`)
			return
		}
		io.Copy(io.Discard, r.Body)
		if posts.Add(1) == 1 {
			close(first)
			<-release
		}
		w.WriteHeader(http.StatusServiceUnavailable) // retryable: the flight would send again
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: "/payments/charge"}
	})
	type answer struct {
		ch  *idempay.Charge
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ch, err := c.Charge(context.Background(), order("o"))
		done <- answer{ch, err}
	}()
	<-first
	ch, err := c.Settle(context.Background(), "o")
	require.NoError(t, err, "the lookup finds the charge")
	assert.Equal(t, "ch_ok", ch.ID)
	close(release)

	got := <-done
	require.NoError(t, got.err, "the flight answers the recorded success")
	assert.Equal(t, "ch_ok", got.ch.ID)
	assert.Equal(t, int32(1), posts.Load(), "no resend after the record was closed")
}
