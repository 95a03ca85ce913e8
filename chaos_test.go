package idempay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/require"
)

var chaosIntents = flag.Int("chaos.intents", 500, "intents charged by the chaos tests (raise it for a long run)")

// chaosRates are the fault mix: 10% lost before the server acts,
// 10% crashes mid-processing, 10% answers lost after charging, 5% 503s.
var chaosRates = refserver.FaultRates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05}

// refView shows a reference server to the chaos harness, and records the
// replay header of the last answer sent for each order.
type refView struct {
	srv  *refserver.Server
	mu   sync.Mutex
	last map[string]bool
}

func (v *refView) Charges(id string) int { return v.srv.Ledger().Count(id) }
func (v *refView) Keys(id string) []string {
	return v.srv.Stats().KeysByOrder[id]
}
func (v *refView) LastReplayed(id string) (bool, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.last[id]
	return r, ok
}
func (v *refView) Faults(on bool) {
	rates := refserver.FaultRates{}
	if on {
		rates = chaosRates
	}
	if err := v.srv.SetFaults(rates); err != nil {
		panic(err)
	}
}

// ServeHTTP passes the request on and notes the replay header of any
// answer that was actually sent.
func (v *refView) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var b struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(body, &b)
	rw := &headerSpy{ResponseWriter: w}
	v.srv.ServeHTTP(rw, r)
	if rw.status != 0 && b.OrderID != "" {
		v.mu.Lock()
		v.last[b.OrderID] = rw.Header().Get("Idempotency-Replayed") == "true"
		v.mu.Unlock()
	}
}

type headerSpy struct {
	http.ResponseWriter
	status int
}

func (h *headerSpy) WriteHeader(code int) {
	h.status = code
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerSpy) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.ResponseWriter.Write(b)
}

// Hijack lets the server drop the connection; no answer is noted then.
func (h *headerSpy) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.ResponseWriter.(http.Hijacker).Hijack()
}

// startRefServer serves a reference server that checks, on every request,
// that the store already holds the request's key for its intent.
func startRefServer(t testing.TB, store idempay.KeyStore, cfg refserver.Config) (*refView, string) {
	cfg.OnRequest = func(info refserver.RequestInfo) {
		rec, err := store.Load(context.Background(), "ownapi:default", info.OrderID)
		if err != nil || rec.Key != info.Key {
			t.Errorf("server received %s with key %q before the store held it (%q, %v)", info.OrderID, info.Key, rec.Key, err)
		}
	}
	view := &refView{srv: refserver.New(cfg), last: map[string]bool{}}
	ts := httptest.NewServer(view)
	t.Cleanup(ts.Close)
	return view, ts.URL
}

func TestChaosOwnAPI(t *testing.T) {
	rep := runOwnAPIChaos(t, *chaosIntents)
	t.Logf("chaos own API: %s", rep)
}

// BenchmarkChaosOwnAPI is the big version of the chaos test: 5,000 intents
// per iteration. go test -run '^$' -bench ChaosOwnAPI -benchtime 3x .
func BenchmarkChaosOwnAPI(b *testing.B) {
	for range b.N {
		rep := runOwnAPIChaos(b, 5000)
		b.ReportMetric(float64(rep.Requests)/float64(rep.Intents), "requests/intent")
	}
}

// runOwnAPIChaos charges n intents through the fault mix and checks every
// promise (see internal/chaos).
func runOwnAPIChaos(t testing.TB, n int) chaos.Report {
	store := memstore.New()
	view, url := startRefServer(t, store, refserver.Config{Lease: chaos.FakeLease, Seed: 7})
	c := newClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Retry = chaos.Retry(8)
	})
	intent := func(i int) string { return fmt.Sprintf("chaos-%05d", i) }
	// Random faults rarely exhaust all eight attempts: make sure a few
	// intents lose every answer, so the second pass always has work.
	lostEverywhere := make([]refserver.Fault, 8)
	for i := range lostEverywhere {
		lostEverywhere[i] = refserver.Post
	}
	for i := 0; i < n; i += 100 {
		view.srv.InjectOrder(intent(i), lostEverywhere...)
	}
	rep := chaos.Run(t, chaos.Config{ServerLease: chaos.FakeLease,
		Intents: n, Workers: 16, Server: view, Intent: intent, CheckReplayed: true,
		Charge: func(ctx context.Context, i int) (*idempay.Charge, error) {
			return c.Charge(ctx, idempay.ChargeRequest{IntentID: intent(i), Amount: int64(100 + i), Currency: "JPY",
				Source: "tokn_chaos"})
		},
	})
	require.GreaterOrEqual(t, rep.Unknown, (n+99)/100, "the scripted intents ended unknown on the first pass")
	require.NoError(t, view.srv.Ledger().Check())
	st := view.srv.Stats()
	require.Equal(t, n, view.srv.Ledger().Len(), "exactly one charge per intent")
	require.EqualValues(t, st.Requests, rep.Requests, "the client counted every request the server received")
	require.Equal(t, st.Replays, rep.ReplayedSeen, "every replay sent was reported as one")
	t.Logf("server saw %d requests, faults %v, replays %d", st.Requests, st.Faults, st.Replays)
	return rep
}
