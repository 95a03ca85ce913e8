package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// held answers each request with st once release is closed.
func held(release <-chan struct{}, st step) step {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			st(w, r)
		case <-r.Context().Done():
		}
	}
}

func waitHits(t *testing.T, s *stub, n int32) {
	t.Helper()
	require.Eventually(t, func() bool { return s.hits.Load() >= n }, 5*time.Second, time.Millisecond)
}

// Rule: a caller who stops waiting does not stop the charge. The browser of
// a BFF disconnects, r.Context() ends: the flight runs to its end, records
// the success, and the next call of the intent answers it. The caller who
// left is told it stopped waiting, with the key and the requests so far.
func TestFlightOutlivesAnImpatientCaller(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, held(release, created("ch_late")))
	c := newClient(t, s.server.URL, store)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Charge(ctx, order("o")); errc <- err }()
	waitHits(t, s, 1)
	cancel()
	err := recv(t, errc)
	assert.ErrorIs(t, err, idempay.ErrStoppedWaiting)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	var ce *idempay.ChargeError
	require.ErrorAs(t, err, &ce)
	assert.NotEmpty(t, ce.Key, "the intent's key")
	assert.Equal(t, 1, ce.Requests, "the requests sent so far")
	assert.NotContains(t, err.Error(), "in progress elsewhere")

	close(release)
	require.Eventually(t, func() bool {
		rec, err := c.Record(context.Background(), "o")
		return err == nil && rec.State == idempay.StateSucceeded
	}, 5*time.Second, time.Millisecond, "the flight recorded its success")
	ch, err := c.Charge(context.Background(), order("o"))
	require.NoError(t, err)
	assert.Equal(t, "ch_late", ch.ID)
	assert.Equal(t, int32(1), s.hits.Load())
}

// Rule: one flight per intent per process, whatever the parameters: a
// charge with the caller's key and one without, at the same moment, send
// one request and agree.
func TestOneFlightPerIntentWhateverTheParameters(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, held(release, created("ch_one")))
	c := newClient(t, s.server.URL, store)
	withKey := order("o")
	withKey.Key = "frontend-key"
	other := order("o")
	other.Amount = 2000

	var wg sync.WaitGroup
	results := make([]error, 3)
	charges := make([]*idempay.Charge, 3)
	for i, req := range []idempay.ChargeRequest{withKey, order("o"), other} {
		wg.Go(func() { charges[i], results[i] = c.Charge(context.Background(), req) })
		if i == 0 {
			waitHits(t, s, 1)
		}
	}
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, int32(1), s.hits.Load(), "the others wait for the first flight")
	close(release)
	wg.Wait()
	for i := range results {
		require.NoError(t, results[i], "call %d", i)
		assert.Equal(t, "ch_one", charges[i].ID, "call %d", i)
	}
	assert.Equal(t, int32(1), s.hits.Load())
}

// Rule: Settle, called from a webhook while this instance's own charge of
// the intent is on the wire, frees no lease: another instance still may
// not send the intent.
func TestSettleNeverFreesAFlightsLease(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	var once sync.Once
	api, url, stop := refserver.Start(refserver.Config{OnRequest: func(refserver.RequestInfo) { once.Do(func() { <-release }) }})
	defer stop()
	provider := func(cfg *idempay.Config) { cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath} }
	a, b := newClient(t, url, store, provider), newClient(t, url, store, provider)

	done := make(chan error, 1)
	go func() { _, err := a.Charge(context.Background(), order("o")); done <- err }()
	require.Eventually(t, func() bool { return api.Stats().Requests == 1 }, 5*time.Second, time.Millisecond)

	_, err := a.Settle(context.Background(), "o")
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown, "not found yet")
	_, err = b.Charge(context.Background(), order("o"))
	assert.ErrorIs(t, err, idempay.ErrInProgress, "the flight still holds the lease")
	assert.Equal(t, 1, api.Stats().Requests)
	close(release)
	require.NoError(t, recv(t, done))
	assert.Equal(t, 1, api.Ledger().Count("o"))
}

// Rule: a charge refused for other parameters takes no lease, so a
// legitimate resume right after it is not told "in progress".
func TestMismatchedRequestTakesNoLease(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, drop)
	a, b, c := newClient(t, s.server.URL, store), newClient(t, s.server.URL, store), newClient(t, s.server.URL, store)
	a.Charge(context.Background(), order("o")) // unknown; lease released
	other := order("o")
	other.Amount = 1
	_, err := b.Charge(context.Background(), other)
	require.ErrorIs(t, err, idempay.ErrAttemptOpen)
	hits := s.hits.Load()
	_, err = c.Charge(context.Background(), order("o"))
	assert.NotErrorIs(t, err, idempay.ErrInProgress)
	assert.Greater(t, s.hits.Load(), hits, "the resume was sent")
}

// Rule: "the key was new and nothing reached the provider" is no proof
// once the lease was lost: another instance may have taken the intent over
// and charged it. A flight refused every time (429) whose lease lapsed is
// unknown, not failed.
func TestLostLeaseTurnsFailedIntoUnknown(t *testing.T) {
	store := memstore.New()
	blocked := &renewalBlocker{KeyStore: store}
	var charged atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Instance") == "b" {
			charged.Store(true)
			created("ch_b")(w, r)
			return
		}
		status(429, `{}`)(w, r)
	})
	lease := 300 * time.Millisecond
	retry := idempay.RetryPolicy{MaxAttempts: 1000, InitialInterval: 20 * time.Millisecond, MaxInterval: 20 * time.Millisecond, MaxElapsed: 2 * time.Second}
	a := newClient(t, s.server.URL, blocked, func(cfg *idempay.Config) { cfg.Lease, cfg.Retry = lease, retry })
	b := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
		cfg.Lease = lease
		cfg.HTTPClient = &http.Client{Transport: headerTransport{"X-Instance", "b"}}
	})

	errA := make(chan error, 1)
	var chA *idempay.Charge
	go func() {
		var err error
		chA, err = a.Charge(context.Background(), order("o"))
		errA <- err
	}()
	waitHits(t, s, 1)
	rec, _ := store.Load(context.Background(), a.Namespace(), "o")
	time.Sleep(time.Until(rec.LeaseUntil))
	_, err := b.Charge(context.Background(), order("o"))
	require.NoError(t, err, "B took the intent over and charged it")
	require.True(t, charged.Load())

	// A stops once its lease is gone and answers what the store knows by
	// then: B's success, or unknown if it looked before B closed.
	err = recv(t, errA)
	assert.NotEqual(t, idempay.OutcomeFailed, idempay.OutcomeOf(err), "money moved under the key: never failed")
	if err == nil {
		assert.Equal(t, "ch_b", chA.ID)
	} else {
		assert.True(t, errors.Is(err, idempay.ErrOutcomeUnknown))
	}
}

type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// Rule: Close refuses new charges and waits for the flights still running.
func TestCloseWaitsForFlights(t *testing.T) {
	store := memstore.New()
	release := make(chan struct{})
	s := newStub(t, store, held(release, created("ch_c")))
	c := newClient(t, s.server.URL, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Charge(ctx, order("o"))
	waitHits(t, s, 1)
	cancel() // the caller gives up; the flight goes on

	closed := make(chan error, 1)
	go func() { closed <- c.Close(context.Background()) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a flight was running")
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	require.NoError(t, recv(t, closed))
	rec, _ := store.Load(context.Background(), c.Namespace(), "o")
	assert.Equal(t, idempay.StateSucceeded, rec.State, "the flight recorded its outcome before Close returned")
	_, err := c.Charge(context.Background(), order("p"))
	assert.ErrorIs(t, err, idempay.ErrClosed)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))

	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	for range 50 { // a random select would fail about half of these
		assert.NoError(t, c.Close(gone), "nothing left to wait for, whatever the context")
	}
}

// Rule: Unresolved reaches every open intent, however many abandoned
// pending ones come before it.
func TestUnresolvedReachesEveryOpenIntent(t *testing.T) {
	store := memstore.New()
	pending := status(202, `{"order_id":"o","charge_id":"ch_p","status":"pending","amount_jpy":1500}`)
	var lost atomic.Bool
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		if lost.Load() {
			drop(w, r)
			return
		}
		pending(w, r)
	})
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	for i := range 250 {
		c.Charge(context.Background(), order(fmt.Sprintf("pending-%03d", i)))
	}
	lost.Store(true)
	c.Charge(context.Background(), order("lost-one"))
	seen := map[string]bool{}
	for rec, err := range c.Unresolved(context.Background()) {
		require.NoError(t, err)
		seen[rec.ID] = true
	}
	assert.Len(t, seen, 251)
	assert.True(t, seen["lost-one"], "the lost charge behind 250 pendings")
}

// Rule: a flight whose intent is settled by someone else while it runs (a
// webhook's Settle found the charge) stops sending and answers with what
// the store now knows, not "unknown".
func TestFlightAnswersASettlementMadeWhileItRan(t *testing.T) {
	store := memstore.New()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			created("ch_found")(w, r)
			return
		}
		posts.Add(1)
		io.Copy(io.Discard, r.Body) // read, so that the server notices the client leave
		<-r.Context().Done()        // the charge's answer never comes
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, store, func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: "/payments/charge"}
		cfg.Lease = idempay.MinLease
	})
	done := make(chan error, 1)
	var got *idempay.Charge
	go func() {
		var err error
		got, err = c.Charge(context.Background(), order("o"))
		done <- err
	}()
	require.Eventually(t, func() bool { return posts.Load() == 1 }, 5*time.Second, time.Millisecond)
	settled, err := c.Settle(context.Background(), "o")
	require.NoError(t, err)
	assert.Equal(t, "ch_found", settled.ID)

	require.NoError(t, recv(t, done), "the flight answers the settlement")
	assert.Equal(t, "ch_found", got.ID)
	assert.Equal(t, idempay.ReplayFromStore, got.ReplayedFrom)
	assert.Equal(t, int32(1), posts.Load(), "and sent nothing more")
}

// countingStore counts the calls that reach the store once counting is on.
type countingStore struct {
	idempay.KeyStore
	on    atomic.Bool
	calls atomic.Int32
}

func (s *countingStore) note() {
	if s.on.Load() {
		s.calls.Add(1)
	}
}

func (s *countingStore) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	s.note()
	return s.KeyStore.Reserve(ctx, r)
}

func (s *countingStore) Resolve(ctx context.Context, res idempay.Resolution) error {
	s.note()
	return s.KeyStore.Resolve(ctx, res)
}

// Rule: once Close has given up waiting, the flights it left send nothing
// more and the client writes nothing more to the store: the application
// has closed it (simulator, write-after-close on the Redis store). The
// intent stays open for the next instance.
func TestNothingAfterCloseGaveUp(t *testing.T) {
	mem := memstore.New()
	store := &countingStore{KeyStore: mem}
	release := make(chan struct{})
	s := newStub(t, mem, held(release, status(503, `{}`)))
	c := newClient(t, s.server.URL, store)
	go c.Charge(context.Background(), order("o"))
	waitHits(t, s, 1)

	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.Error(t, c.Close(short), "a flight is still running")
	store.on.Store(true)
	close(release) // the 503 comes back: the flight would resend and record
	time.Sleep(3 * idempay.MinLease)
	assert.Equal(t, int32(1), s.hits.Load(), "no resend after Close gave up")
	assert.Zero(t, store.calls.Load(), "no store write after Close gave up")
	rec, err := mem.Load(context.Background(), c.Namespace(), "o")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateOpen, rec.State, "left open for the next instance")
}
