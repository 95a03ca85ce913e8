package idempay_test

import (
	"context"
	"errors"
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

// staleWorld is a provider that forgets keys after 24 h, a store whose
// clock can be set back without anyone reading it across the step, and a
// network that can lose every answer.
type staleWorld struct {
	srv       *refserver.Server
	url       string
	store     idempay.KeyStore
	trueNow   atomic.Int64 // nanoseconds
	storeBack atomic.Int64 // how far the store's clock is behind true time
	lose      atomic.Bool  // every answer lost after the server processed it
}

func newStaleWorld(t *testing.T) *staleWorld {
	w := &staleWorld{}
	w.trueNow.Store(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixNano())
	w.srv = refserver.New(refserver.Config{Now: w.now, Retention: 24 * time.Hour, Lease: time.Second})
	ts := httptest.NewServer(w.srv)
	t.Cleanup(ts.Close)
	w.url = ts.URL
	w.store = memstore.New(memstore.WithClock(func() time.Time {
		return w.now().Add(-time.Duration(w.storeBack.Load()))
	}))
	return w
}

func (w *staleWorld) now() time.Time { return time.Unix(0, w.trueNow.Load()).UTC() }

func (w *staleWorld) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && w.lose.Load() {
		resp.Body.Close()
		return nil, errors.New("connection reset after the request was processed")
	}
	return resp, err
}

// client is a fresh process: it has never read the store before now.
func (w *staleWorld) client(t *testing.T, p idempay.OwnAPI) *idempay.Client {
	return newClient(t, w.url, w.store, func(cfg *idempay.Config) {
		cfg.Provider = p
		cfg.HTTPClient = &http.Client{Transport: w}
		cfg.Clock = w.now
	})
}

// chargeLost charges o with every answer lost: the provider charged it,
// the store holds its key open, the outcome is unknown.
func (w *staleWorld) chargeLost(t *testing.T, c *idempay.Client) {
	w.lose.Store(true)
	defer w.lose.Store(false)
	_, err := c.Charge(context.Background(), order("o"))
	require.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	require.Equal(t, 1, w.srv.Ledger().Count("o"), "the provider charged the first attempt")
}

var ownAPIWithLookup = idempay.OwnAPI{LookupPath: refserver.DefaultPath}

// Rule: a key resumed long after it was reserved is asked of the provider
// before it is resent. The store's clock was set back 3 h while no Client
// read it (a power cut of the database host, an NTP step), so nothing in
// the store shows the step: 25 h after the charge, the key reads 22 h old,
// inside the 23 h retention, though the provider forgot it an hour ago and
// would execute it again. Sent as it is, it charged the customer twice.
func TestResumeOfAnHourOldKeyIsLookedUpBeforeItIsResent(t *testing.T) {
	w := newStaleWorld(t)
	w.chargeLost(t, w.client(t, ownAPIWithLookup))

	w.trueNow.Add(int64(25 * time.Hour))
	w.storeBack.Store(int64(3 * time.Hour))
	lookups := w.srv.Stats().Lookups
	ch, err := w.client(t, ownAPIWithLookup).Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, 1, w.srv.Ledger().Count("o"), "charged once: the lookup found the charge the forgotten key made")
	assert.Greater(t, w.srv.Stats().Lookups, lookups, "the provider was asked before anything was sent")
}

// Rule: a lookup that cannot answer leaves the hour-old key unsent: the
// outcome is unknown, the record open to settle, and no request leaves.
func TestResumeOfAnHourOldKeyWhileTheLookupFailsSendsNothing(t *testing.T) {
	w := newStaleWorld(t)
	w.chargeLost(t, w.client(t, ownAPIWithLookup))

	w.trueNow.Add(2 * int64(time.Hour))
	w.lose.Store(true) // the lookup's answer is lost too
	requests := w.srv.Stats().Requests
	_, err := w.client(t, ownAPIWithLookup).Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.Equal(t, requests, w.srv.Stats().Requests, "no charge request without the provider's answer")
	rec, err := w.store.Load(context.Background(), "ownapi:default", "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateOpen, rec.State, "left open for a later call to settle")
}

// Rule: a resume minutes after the reservation (a crash, a takeover) is
// resent at once; only an hour-old key pays a lookup.
func TestResumeOfAYoungKeyIsResentWithoutALookup(t *testing.T) {
	w := newStaleWorld(t)
	w.chargeLost(t, w.client(t, ownAPIWithLookup))

	w.trueNow.Add(int64(10 * time.Minute))
	ch, err := w.client(t, ownAPIWithLookup).Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.True(t, ch.Replayed, "the provider replayed the key's charge")
	assert.Equal(t, 0, w.srv.Stats().Lookups)
	assert.Equal(t, 1, w.srv.Ledger().Count("o"))
}

// Rule: where the provider cannot be asked, an hour-old key younger than
// the retention on the store's clock is resent, as documented: the store's
// word on its age is all there is (Config.KeyRetention).
func TestResumeOfAnHourOldKeyWithoutALookupIsResent(t *testing.T) {
	w := newStaleWorld(t)
	w.chargeLost(t, w.client(t, idempay.OwnAPI{}))

	w.trueNow.Add(int64(2 * time.Hour))
	ch, err := w.client(t, idempay.OwnAPI{}).Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.True(t, ch.Replayed)
	assert.Equal(t, 1, w.srv.Ledger().Count("o"))
}
