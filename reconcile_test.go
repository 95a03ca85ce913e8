package idempay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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

// wireLog is the provider's side of a test: every charge request the
// server received (the key, the order, when), and any two requests of one
// key that overlapped in time, which would be two senders at once.
type wireLog struct {
	next     http.Handler
	mu       sync.Mutex
	inFlight map[string]int
	overlaps []string
	reqs     []wireReq
}

type wireReq struct {
	Key, Order string
	Status     int
	At         time.Time
}

func newWireLog(next http.Handler) *wireLog {
	return &wireLog{next: next, inFlight: map[string]int{}}
}

func (l *wireLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		l.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var b struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(body, &b)
	key := r.Header.Get("Idempotency-Key")
	l.mu.Lock()
	l.inFlight[key]++
	if l.inFlight[key] > 1 {
		l.overlaps = append(l.overlaps, key)
	}
	i := len(l.reqs)
	l.reqs = append(l.reqs, wireReq{Key: key, Order: b.OrderID, At: time.Now()})
	l.mu.Unlock()
	spy := &headerSpy{ResponseWriter: w}
	defer func() {
		l.mu.Lock()
		l.inFlight[key]--
		l.reqs[i].Status = spy.status
		l.mu.Unlock()
	}()
	l.next.ServeHTTP(spy, r)
}

// since returns the requests received from index n on, by key.
func (l *wireLog) since(n int) (map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string]int{}
	for _, r := range l.reqs[n:] {
		by[r.Key]++
	}
	return by, len(l.reqs)
}

// gate holds the answers to the intents it is told to: the request reaches
// the server, which charges, and the answer is kept from the client until
// the gate opens, as when a process dies with its requests on the wire.
type gate struct {
	base    http.RoundTripper
	hold    func(order string) bool
	arrived chan string
	open    chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	order := ""
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var b struct {
			OrderID string `json:"order_id"`
		}
		_ = json.Unmarshal(body, &b)
		order = b.OrderID
	}
	resp, err := g.base.RoundTrip(r)
	if r.Method == http.MethodPost && g.hold(order) {
		g.arrived <- order
		<-g.open
	}
	return resp, err
}

func reconcileIntent(i int) string { return fmt.Sprintf("rec-%04d", i) }

func reconcileRequest(i int) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: reconcileIntent(i), Amount: int64(100 + i), Currency: "JPY", Source: "tokn_rec"}
}

// abandonedRun charges n intents through a fault mix with a client that
// is then killed: the answers of every held intent never reach it, and it
// is closed without waiting, so it writes nothing more. It returns the
// store, the server and its log, with faults off again.
func abandonedRun(t *testing.T, n int, held func(i int) bool) (idempay.KeyStore, *refView, *wireLog, string) {
	t.Helper()
	store := memstore.New()
	view := &refView{srv: refserver.New(refserver.Config{Lease: 30 * time.Millisecond, Seed: 11}), last: map[string]bool{}}
	log := newWireLog(view)
	ts := httptest.NewServer(log)
	t.Cleanup(ts.Close)
	heldOrders := map[string]bool{}
	nHeld := 0
	for i := range n {
		if held(i) {
			heldOrders[reconcileIntent(i)] = true
			nHeld++
		}
	}
	g := &gate{base: http.DefaultTransport, hold: func(o string) bool { return heldOrders[o] },
		arrived: make(chan string, 2*n), open: make(chan struct{})}
	a, err := idempay.New(idempay.Config{BaseURL: ts.URL, Store: store, Instance: "killed", Lease: time.Second,
		HTTPClient: &http.Client{Transport: g},
		Retry:      idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond, MaxElapsed: 10 * time.Second}})
	require.NoError(t, err)
	view.Faults(true)
	var free, all sync.WaitGroup
	for i := range n {
		all.Add(1)
		if !held(i) {
			free.Add(1)
		}
		go func() {
			defer all.Done()
			_, _ = a.Charge(context.Background(), reconcileRequest(i))
			if held(i) {
				// Ended without reaching the gate (its lease ran out
				// on a busy machine before it could send): as good.
				g.arrived <- reconcileIntent(i)
			} else {
				free.Done()
			}
		}()
	}
	for range nHeld { // every held intent is on the wire, or ended
		<-g.arrived
	}
	free.Wait()
	// The kill: Close gives up at once with the held flights running, so
	// from now on the client sends nothing and writes nothing.
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, a.Close(dead))
	close(g.open)
	all.Wait()
	view.Faults(false)
	return store, view, log, ts.URL
}

func reconcilerOn(t *testing.T, url string, store idempay.KeyStore, instance string, mods ...func(*idempay.Config)) *idempay.Reconciler {
	cfg := idempay.Config{BaseURL: url, Store: store, Instance: instance,
		Retry: idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond, MaxElapsed: 10 * time.Second}}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return &idempay.Reconciler{Client: c, Concurrency: 4, Tries: 40, Backoff: 20 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		ChargeRequest: func(_ context.Context, rec idempay.Record) (idempay.ChargeRequest, bool, error) {
			var i int
			if _, err := fmt.Sscanf(rec.ID, "rec-%d", &i); err != nil {
				return idempay.ChargeRequest{}, false, err
			}
			return reconcileRequest(i), true, nil
		}}
}

func openIntents(t *testing.T, c *idempay.Client) map[string]idempay.Record {
	open := map[string]idempay.Record{}
	for rec, err := range c.Unresolved(context.Background()) {
		require.NoError(t, err)
		open[rec.ID] = rec
	}
	return open
}

// TestReconcilerSettlesAfterKill: a client killed mid-flight (a quarter of
// its intents charged at the server, their answers never read) leaves open
// records; two reconcilers started at once on other instances settle every
// one, each by resending its stored key exactly once between them, never
// two sends of one key at a time, and every intent is charged once.
func TestReconcilerSettlesAfterKill(t *testing.T) {
	const n = 200
	held := func(i int) bool { return i%4 == 0 }
	store, view, log, url := abandonedRun(t, n, held)
	r1, r2 := reconcilerOn(t, url, store, "rec-1"), reconcilerOn(t, url, store, "rec-2")
	open := openIntents(t, r1.Client)
	for i := range n {
		if held(i) {
			require.Contains(t, open, reconcileIntent(i), "a killed flight's record stays open")
		}
	}
	_, mark := log.since(0)

	var wg sync.WaitGroup
	reps := make([]*idempay.ReconcileReport, 2)
	errs := make([]error, 2)
	for k, r := range []*idempay.Reconciler{r1, r2} {
		wg.Add(1)
		go func() { defer wg.Done(); reps[k], errs[k] = r.Reconcile(context.Background()) }()
	}
	wg.Wait()
	for k := range reps {
		require.NoError(t, errs[k], "reconciler %d left %v", k+1, reps[k].Unsettled)
	}
	by := map[string]int{}
	for _, rep := range reps {
		for _, it := range rep.Settled {
			by[it.By]++
		}
	}
	t.Logf("open after the kill: %d; settled by reconciler 1: %d, by 2: %d; how: %v", len(open), len(reps[0].Settled), len(reps[1].Settled), by)
	assert.Equal(t, len(open), by["resend"], "each open intent resent by exactly one of the two")
	assert.Empty(t, openIntents(t, r1.Client), "nothing open after reconciling")

	sent, _ := log.since(mark)
	for id, rec := range open {
		assert.LessOrEqual(t, sent[rec.Key], 1, "open intent %s resent %d times by the two reconcilers", id, sent[rec.Key])
		got, err := store.Load(context.Background(), rec.Namespace, id)
		require.NoError(t, err)
		assert.Equal(t, idempay.StateSucceeded, got.State, "intent %s", id)
	}
	assert.Empty(t, log.overlaps, "two requests of one key on the wire at once")
	for i := range n {
		id := reconcileIntent(i)
		rec, err := store.Load(context.Background(), "ownapi:default", id)
		require.NoError(t, err)
		want := 1
		if rec.State == idempay.StateFailed {
			want = 0 // nothing arrived, as the record says
		}
		assert.Equal(t, want, view.Charges(id), "intent %s (%s) charged", id, rec.State)
	}
	require.NoError(t, view.srv.Ledger().Check())
}

// TestReconcilerByLookup: without the service's requests the reconciler
// settles by lookup; a record nothing was sent for stays open, with the
// reason, and Reconcile says some are left.
func TestReconcilerByLookup(t *testing.T) {
	const n = 40
	store, view, _, url := abandonedRun(t, n, func(i int) bool { return i%2 == 0 })
	r := reconcilerOn(t, url, store, "lookup", func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath}
	})
	r.ChargeRequest = nil
	before := openIntents(t, r.Client)
	require.NotEmpty(t, before)
	var progress atomic.Int64
	r.Progress = func(idempay.ReconcileProgress) { progress.Add(1) }
	rep, err := r.Reconcile(context.Background())
	if err != nil {
		require.ErrorIs(t, err, idempay.ErrReconcileIncomplete)
	}
	assert.EqualValues(t, len(before), progress.Load(), "a progress call per record")
	assert.Equal(t, len(before), len(rep.Settled)+len(rep.Unsettled))
	for _, it := range rep.Settled {
		assert.Equal(t, "lookup", it.By)
		assert.True(t, it.State.Closed())
	}
	for _, it := range rep.Unsettled {
		assert.NotEmpty(t, it.Reason, "an unsettled record says why")
		assert.NotEqual(t, idempay.OutcomeFailed, it.Outcome)
	}
	// A lookup settles exactly the intents the server charged, and only
	// those: the others stay open, never failed.
	for i := range n {
		id := reconcileIntent(i)
		rec, err := store.Load(context.Background(), "ownapi:default", id)
		require.NoError(t, err)
		if _, wasOpen := before[id]; !wasOpen {
			continue
		}
		if view.Charges(id) == 1 {
			assert.Equal(t, idempay.StateSucceeded, rec.State, "intent %s charged at the server, found by lookup", id)
		} else {
			assert.Equal(t, idempay.StateOpen, rec.State, "intent %s never charged: open until the key is old", id)
		}
	}
}

// TestReconcilerStopsOnContext: a cancelled context ends a pass at once.
func TestReconcilerStopsOnContext(t *testing.T) {
	store, _, _, url := abandonedRun(t, 8, func(int) bool { return true })
	r := reconcilerOn(t, url, store, "stop")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Reconcile(ctx)
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.NotEmpty(t, openIntents(t, r.Client), "nothing settled after the stop")
	assert.False(t, strings.Contains(err.Error(), "tokn_rec"))
}

// loseOpAnswers forwards every request and loses the answers to POSTs on
// the refund path: the server refunds, the client never hears of it.
type loseOpAnswers struct{ base http.RoundTripper }

func (l loseOpAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.Contains(r.URL.Path, "refund") {
		resp.Body.Close()
		return nil, errors.New("answer lost")
	}
	return resp, err
}

// TestReconcilerSettlesOpenRefund: a refund whose answer was lost stays
// open; the reconciler finds its intent and amount in the intent's ledger
// and settles it by lookup, without the service's request.
func TestReconcilerSettlesOpenRefund(t *testing.T) {
	store := memstore.New()
	_, url := startRefServer(t, store, refserver.Config{})
	provider := idempay.OwnAPI{LookupPath: refserver.DefaultPath, OpLookup: true}
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = provider
		cfg.HTTPClient = &http.Client{Transport: loseOpAnswers{http.DefaultTransport}}
		cfg.Retry = idempay.RetryPolicy{MaxAttempts: 1}
	})
	_, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: "paid", Amount: 1000, Currency: "JPY", Source: "tokn"})
	require.NoError(t, err)
	_, err = c.Refund(context.Background(), idempay.RefundRequest{RefundID: "rf-1", IntentID: "paid", Amount: 300, Currency: "JPY"})
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "%v", err)

	r := reconcilerOn(t, url, store, "ops", func(cfg *idempay.Config) { cfg.Provider = provider })
	r.ChargeRequest = nil
	rep, err := r.Reconcile(context.Background())
	require.NoError(t, err, "%+v", rep)
	require.Len(t, rep.Settled, 1)
	it := rep.Settled[0]
	assert.Equal(t, "refund", it.Kind)
	assert.Equal(t, "rf-1", it.ID)
	assert.Equal(t, "paid", it.IntentID)
	assert.Equal(t, idempay.StateSucceeded, it.State)
	l, err := r.Client.Ledger(context.Background(), "paid")
	require.NoError(t, err)
	assert.EqualValues(t, 300, l.Refunded, "the ledger knows the refund succeeded")
}

// TestReconcilerRun: Run settles in passes until its context ends, and
// returns the context's cause.
func TestReconcilerRun(t *testing.T) {
	store, _, _, url := abandonedRun(t, 8, func(int) bool { return true })
	r := reconcilerOn(t, url, store, "run")
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("settled, stop")
	want := len(openIntents(t, r.Client))
	require.NotZero(t, want)
	r.Progress = func(p idempay.ReconcileProgress) {
		if p.Settled == want {
			cancel(stop)
		}
	}
	err := r.Run(ctx, time.Millisecond)
	assert.ErrorIs(t, err, stop)
	assert.Empty(t, openIntents(t, r.Client))
}

// TestReconcileCheckCatchesLeaselessResend proves the double-send check of
// TestReconcilerSettlesAfterKill can fail: two naive reconcilers that
// resend each open record's stored key straight to the provider, without
// taking its lease, are caught sending keys twice.
func TestReconcileCheckCatchesLeaselessResend(t *testing.T) {
	store, _, log, url := abandonedRun(t, 40, func(i int) bool { return i%4 == 0 })
	c := reconcilerOn(t, url, store, "naive").Client
	open := openIntents(t, c)
	require.NotEmpty(t, open)
	_, mark := log.since(0)
	target := idempay.Target{BaseURL: mustURL(t, url), Namespace: "ownapi:default"}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id, rec := range open {
				var i int
				_, _ = fmt.Sscanf(id, "rec-%d", &i)
				req, err := idempay.OwnAPI{}.NewChargeRequest(context.Background(), target, reconcileRequest(i), rec.Key)
				if err != nil {
					t.Error(err)
					return
				}
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	sent, _ := log.since(mark)
	twice := 0
	for _, rec := range open {
		if sent[rec.Key] > 1 {
			twice++
		}
	}
	assert.Equal(t, len(open), twice, "every open key sent by both: the check sees it")
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
