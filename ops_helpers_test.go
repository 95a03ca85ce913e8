package idempay_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/require"
)

var opsStoreKind = flag.String("ops.store", "mem", "the store the refund, capture and cancel tests run on: mem or file")

// opsStore is the one place the operation tests make a store, so that
// they all run on another one: -ops.store=file for keystore/filestore (add
// postgres and redis here once their ports land).
func opsStore(t testing.TB) idempay.KeyStore {
	t.Helper()
	switch *opsStoreKind {
	case "file":
		s, err := filestore.Open(filepath.Join(t.TempDir(), "keys.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	case "mem":
		return memstore.New()
	}
	t.Fatalf("-ops.store=%s: want mem or file", *opsStoreKind)
	return nil
}

// opsServer is a reference server for operation tests. On every request it
// checks what must hold before the first byte of a request: the request's
// key is its record's key in the store, and, for an operation, the intent's
// ledger holds an entry for that very key (its amount is reserved).
type opsServer struct {
	*refserver.Server
	URL    string
	reader atomic.Pointer[idempay.Client] // reads the store for the checks
	mu     sync.Mutex
	script map[string][]step // scripted answers by refund_id, capture_id or cancel_id
	hits   map[string]int    // operation requests (POST and GET) by ID
}

// answer scripts the next answers to the requests (POST or GET) naming
// opID, one step per request; the reference server answers the rest.
func (s *opsServer) answer(opID string, steps ...step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[opID] = append(s.script[opID], steps...)
}

// requests is how many requests named opID, scripted or not.
func (s *opsServer) requests(opID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[opID]
}

func (s *opsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	id := opIDIn(r, body)
	s.mu.Lock()
	var st step
	if id != "" {
		s.hits[id]++
		if q := s.script[id]; len(q) > 0 {
			st, s.script[id] = q[0], q[1:]
		}
	}
	s.mu.Unlock()
	if st != nil {
		st(w, r)
		return
	}
	s.Server.ServeHTTP(w, r)
}

// opIDIn is the operation ID a request names, in its body or its query.
func opIDIn(r *http.Request, body []byte) string {
	var b struct {
		Refund  string `json:"refund_id"`
		Capture string `json:"capture_id"`
		Cancel  string `json:"cancel_id"`
	}
	_ = json.Unmarshal(body, &b)
	q := r.URL.Query()
	return cmp.Or(b.Refund, b.Capture, b.Cancel, q.Get("refund_id"), q.Get("capture_id"), q.Get("cancel_id"))
}

func startOps(t testing.TB, store idempay.KeyStore, cfg refserver.Config) *opsServer {
	t.Helper()
	s := &opsServer{script: map[string][]step{}, hits: map[string]int{}}
	cfg.OnRequest = func(info refserver.RequestInfo) {
		rec, err := store.Load(context.Background(), "ownapi:default", info.OrderID)
		if err != nil || rec.Key != info.Key {
			t.Errorf("charge %s arrived with key %q before the store held it (%q, %v)", info.OrderID, info.Key, rec.Key, err)
		}
	}
	cfg.OnOpRequest = func(info refserver.OpRequestInfo) { s.checkArrival(t, store, info) }
	s.Server = refserver.New(cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func (s *opsServer) checkArrival(t testing.TB, store idempay.KeyStore, info refserver.OpRequestInfo) {
	rec, err := store.Load(context.Background(), "ownapi:default/"+info.Op, info.OpID)
	if err != nil || rec.Key != info.Key {
		t.Errorf("%s %s arrived with key %q before the store held it (%q, %v)", info.Op, info.OpID, info.Key, rec.Key, err)
		return
	}
	c := s.reader.Load()
	if c == nil {
		return
	}
	l, err := c.Ledger(context.Background(), info.OrderID)
	if err != nil || !slices.ContainsFunc(l.Ops, func(o idempay.LedgerOp) bool { return o.Key == info.Key }) {
		t.Errorf("%s %s arrived with key %q before the ledger of %s held it (%v)", info.Op, info.OpID, info.Key, info.OrderID, err)
	}
}

// opsClient is a client of the own API with lookups for charges and
// operations; the first one made reads the store for s's checks.
func opsClient(t testing.TB, s *opsServer, store idempay.KeyStore, mods ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	mods = append([]func(*idempay.Config){func(cfg *idempay.Config) {
		cfg.Provider = idempay.OwnAPI{LookupPath: refserver.DefaultPath, OpLookup: true}
	}}, mods...)
	c := newClient(t, s.URL, store, mods...)
	s.reader.CompareAndSwap(nil, c)
	return c
}

// charged charges intent id for amount yen, or authorises it when manual.
func charged(t testing.TB, c *idempay.Client, id string, amount int64, manual bool) {
	t.Helper()
	req := order(id)
	req.Amount = amount
	if manual {
		req.Extra = map[string]string{"capture": "false"}
	}
	_, err := c.Charge(context.Background(), req)
	if manual {
		require.ErrorIs(t, err, idempay.ErrAuthorized)
		return
	}
	require.NoError(t, err)
}

func refundOf(intent, refundID string, amount int64) idempay.RefundRequest {
	return idempay.RefundRequest{RefundID: refundID, IntentID: intent, Amount: amount, Currency: "JPY"}
}

func refundID(intent string, i int) string { return fmt.Sprintf("%s-rf-%02d", intent, i) }

// opAnswer is a scripted answer to an operation, as the own API gives it.
func opAnswer(code int, id, word string, amount int64) step {
	return status(code, fmt.Sprintf(`{"id":%q,"status":%q,"amount":%d,"currency":"JPY"}`, id, word, amount))
}

// recordOf loads an operation's record.
func recordOf(t testing.TB, store idempay.KeyStore, op idempay.OpType, id string) (idempay.Record, error) {
	t.Helper()
	return store.Load(context.Background(), "ownapi:default/"+string(op), id)
}
