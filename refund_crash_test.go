package idempay_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledgerFaults is a store that fails the ledger's writes or reservations,
// or panics in loads of one namespace, a given number of times.
type ledgerFaults struct {
	idempay.KeyStore
	failWrites     atomic.Int32 // ledger writes refused before they apply
	lostReplies    atomic.Int32 // ledger writes applied, then reported failed
	failReserves   atomic.Int32 // ledger reservations refused
	panicLoadsOfNS atomic.Pointer[string]
}

var errStoreDown = errors.New("store unreachable")

func isLedger(ns string) bool { return strings.HasSuffix(ns, "/ledger") }

func take(n *atomic.Int32) bool { return n.Add(-1) >= 0 }

func (s *ledgerFaults) Resolve(ctx context.Context, res idempay.Resolution) error {
	if isLedger(res.Namespace) && res.Result != nil {
		if take(&s.failWrites) {
			return errStoreDown
		}
		if take(&s.lostReplies) {
			_ = s.KeyStore.Resolve(ctx, res)
			return errStoreDown
		}
	}
	return s.KeyStore.Resolve(ctx, res)
}

func (s *ledgerFaults) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if isLedger(r.Namespace) && take(&s.failReserves) {
		return idempay.Reservation{}, errStoreDown
	}
	return s.KeyStore.Reserve(ctx, r)
}

func (s *ledgerFaults) Load(ctx context.Context, ns, id string) (idempay.Record, error) {
	if p := s.panicLoadsOfNS.Load(); p != nil && *p == ns {
		panic("store bug in Load")
	}
	return s.KeyStore.Load(ctx, ns, id)
}

// Rule: the ledger holds a refund's amount from before its first byte, so
// a crash between the ledger and the send (here a panic while building the
// request) leaves the amount counted and nothing sent; the next call, in a
// new process, goes on with the same key, and the refund is made once.
func TestCrashBetweenLedgerAndSend(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	var armed atomic.Bool
	armed.Store(true)
	crashy := func(cfg *idempay.Config) {
		cfg.Provider = crashOnBuild{OwnAPI: idempay.OwnAPI{LookupPath: refserver.DefaultPath, OpLookup: true}, armed: &armed}
		cfg.Lease = idempay.MinLease
	}
	c := opsClient(t, s, store, crashy)
	charged(t, c, "o", 1500, false)
	_, err := c.Refund(context.Background(), refundOf("o", "rf-1", 900))
	var pe *idempay.PanicError
	require.ErrorAs(t, err, &pe)
	opErr(t, err, idempay.OutcomeUnknown)
	assert.Zero(t, s.Stats().Ops.Requests, "nothing sent")
	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	require.Len(t, l.Ops, 1, "the amount was reserved before the first byte")
	assert.Equal(t, int64(600), l.Refundable)
	_, err = c.Refund(context.Background(), refundOf("o", "rf-2", 601))
	require.ErrorIs(t, err, idempay.ErrRefundExceeds, "and it counts")
	rec, err := recordOf(t, store, idempay.OpRefund, "rf-1")
	require.NoError(t, err)

	armed.Store(false)
	restarted := opsClient(t, s, store)
	var op *idempay.Operation
	require.Eventually(t, func() bool {
		op, err = restarted.Refund(context.Background(), refundOf("o", "rf-1", 900))
		return !errors.Is(err, idempay.ErrInProgress)
	}, 2*time.Second, 10*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, rec.Key, op.Key, "the same key")
	assert.Equal(t, 1, s.Ops().Count("rf-1"))
	l, err = restarted.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Len(t, l.Ops, 1, "the resumed attempt is the reserved one")
	assert.Equal(t, int64(900), l.Refunded)
}

// crashOnBuild panics while building a refund while armed.
type crashOnBuild struct {
	idempay.OwnAPI
	armed *atomic.Bool
}

func (p crashOnBuild) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	if op.Type == idempay.OpRefund && p.armed.Load() {
		panic("process dies here")
	}
	return p.OwnAPI.NewOpRequest(ctx, t, op, key)
}

// Rule: a ledger write that fails sends nothing (outcome unknown: an
// earlier call may have sent the key), whether it was lost before it
// applied or after; the next call goes on with the same key and enters
// the refund once.
func TestLedgerWriteFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(*ledgerFaults)
	}{
		{"refused before it applied", func(s *ledgerFaults) { s.failWrites.Store(1) }},
		{"applied, reply lost", func(s *ledgerFaults) { s.lostReplies.Store(1) }},
		{"ledger not reachable", func(s *ledgerFaults) { s.failReserves.Store(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := opsStore(t)
			store := &ledgerFaults{KeyStore: mem}
			s := startOps(t, mem, refserver.Config{})
			c := opsClient(t, s, store)
			charged(t, c, "o", 1500, false)
			tc.arm(store)
			_, err := c.Refund(context.Background(), refundOf("o", "rf-1", 900))
			require.ErrorIs(t, err, idempay.ErrStore)
			opErr(t, err, idempay.OutcomeUnknown)
			assert.Zero(t, s.Stats().Ops.Requests, "nothing sent")
			rec, err := recordOf(t, mem, idempay.OpRefund, "rf-1")
			require.NoError(t, err)
			assert.Equal(t, idempay.StateOpen, rec.State)

			start := time.Now()
			op, err := c.Refund(context.Background(), refundOf("o", "rf-1", 900))
			require.NoError(t, err)
			assert.Less(t, time.Since(start), time.Second, "the failed write gave the ledger's lease back")
			assert.Equal(t, rec.Key, op.Key)
			l, err := c.Ledger(context.Background(), "o")
			require.NoError(t, err)
			assert.Len(t, l.Ops, 1)
			assert.Equal(t, 1, s.Ops().Count("rf-1"))
		})
	}
}

// Rule: a ledger whose holder crashed is free again once its lease runs
// out; one held throughout is reported in progress, with nothing sent.
func TestLedgerHeldByAnotherFlight(t *testing.T) {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{})
	lease := 400 * time.Millisecond
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Lease = lease })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	hold := func() {
		res, err := store.Reserve(ctx, idempay.ReserveRequest{Namespace: "ownapi:default/ledger", ID: "o",
			Attempt: 1, Key: "ledger", Fingerprint: "idempay-ledger-v1", Owner: "crashed/flight", Lease: lease})
		require.NoError(t, err)
		require.True(t, res.Claimed)
	}
	hold()
	start := time.Now()
	_, err := c.Refund(ctx, refundOf("o", "rf-1", 100))
	require.NoError(t, err, "the crashed holder's lease ran out")
	assert.GreaterOrEqual(t, time.Since(start), lease/2)

	stop := make(chan struct{})
	done := make(chan struct{})
	hold()
	go func() { // a holder that never lets go
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(lease / 4):
			}
			hold()
		}
	}()
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 100))
	close(stop)
	<-done
	require.ErrorIs(t, err, idempay.ErrInProgress)
	opErr(t, err, idempay.OutcomeUnknown)
	assert.Zero(t, s.requests("rf-2"))
}

// Rule: a panic anywhere in a refund's flight is contained: unknown, a
// *PanicError, and the leases it held (the refund's, the ledger's) are
// given back at once, so the next refund of the intent does not wait.
func TestPanicsInARefundAreContained(t *testing.T) {
	mem := opsStore(t)
	store := &ledgerFaults{KeyStore: mem}
	s := startOps(t, mem, refserver.Config{})
	c := opsClient(t, s, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	charged(t, c, "o", 1500, false)
	ctx := context.Background()
	s.answer("rf-1", drop)
	_, err := c.Refund(ctx, refundOf("o", "rf-1", 100))
	opErr(t, err, idempay.OutcomeUnknown) // an unsettled entry: the next refund loads its record

	ns := "ownapi:default/refund"
	store.panicLoadsOfNS.Store(&ns)
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 100))
	store.panicLoadsOfNS.Store(nil)
	var pe *idempay.PanicError
	require.ErrorAs(t, err, &pe)
	opErr(t, err, idempay.OutcomeUnknown)

	start := time.Now()
	_, err = c.Refund(ctx, refundOf("o", "rf-3", 100))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "the ledger's lease was given back")
	_, err = c.Refund(ctx, refundOf("o", "rf-2", 100))
	require.NoError(t, err, "and the refund's own")

	reader := newClient(t, s.URL, mem, func(cfg *idempay.Config) {
		cfg.Provider = panicOnRead{idempay.OwnAPI{OpLookup: true}}
		cfg.Retry.MaxAttempts = 1
	})
	_, err = reader.Refund(ctx, refundOf("o", "rf-4", 100))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, s.Ops().Count("rf-4"), "sent, then the adapter panicked reading the answer")
	op, err := c.Refund(ctx, refundOf("o", "rf-4", 100))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromServer, op.ReplayedFrom)
	assert.Equal(t, 1, s.Ops().Count("rf-4"))
}

type panicOnRead struct{ idempay.OwnAPI }

func (p panicOnRead) ReadOp(t idempay.OpType, resp *http.Response, body []byte) idempay.Verdict {
	if t == idempay.OpRefund {
		panic("adapter bug reading a refund")
	}
	return p.OwnAPI.ReadOp(t, resp, body)
}
