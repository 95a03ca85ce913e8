package idempay_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/require"
)

// opsServer is a reference server for operation tests. On every request it
// checks what must hold before the first byte of a request: the request's
// key is its record's key in the store, and, for an operation, the intent's
// ledger holds an entry for that very key (its amount is reserved).
type opsServer struct {
	*refserver.Server
	URL    string
	reader atomic.Pointer[idempay.Client] // reads the store for the checks
}

func startOps(t testing.TB, store idempay.KeyStore, cfg refserver.Config) *opsServer {
	t.Helper()
	s := &opsServer{}
	cfg.OnRequest = func(info refserver.RequestInfo) {
		rec, err := store.Load(context.Background(), "ownapi:default", info.OrderID)
		if err != nil || rec.Key != info.Key {
			t.Errorf("charge %s arrived with key %q before the store held it (%q, %v)", info.OrderID, info.Key, rec.Key, err)
		}
	}
	cfg.OnOpRequest = func(info refserver.OpRequestInfo) { s.checkArrival(t, store, info) }
	s.Server = refserver.New(cfg)
	ts := httptest.NewServer(s.Server)
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
