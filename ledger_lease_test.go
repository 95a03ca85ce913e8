package idempay_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stalledInstance is instance A's view of the store: once armed, its next
// read of a refund's record (inside the ledger's update) waits for
// loadGate, and its next renewal of the ledger's lease reaches the store
// only when renewGate opens: a request held in the network or a slow
// database, applied late.
type stalledInstance struct {
	idempay.KeyStore
	armed     chan struct{} // closed: stall from now on
	loadGate  chan struct{}
	renewGate chan struct{}
	renewing  chan struct{} // closed when the held renewal arrives
	reserves  atomic.Int32
	loads     sync.Once
}

func (s *stalledInstance) Load(ctx context.Context, ns, id string) (idempay.Record, error) {
	if s.isArmed() && strings.HasSuffix(ns, "/refund") {
		s.loads.Do(func() { <-s.loadGate })
	}
	return s.KeyStore.Load(ctx, ns, id)
}

func (s *stalledInstance) Reserve(ctx context.Context, r idempay.ReserveRequest) (idempay.Reservation, error) {
	if s.isArmed() && isLedger(r.Namespace) {
		if s.reserves.Add(1) == 2 { // the claim passes; its first renewal is held
			close(s.renewing)
			<-s.renewGate
			return s.KeyStore.Reserve(context.WithoutCancel(ctx), r)
		}
	}
	return s.KeyStore.Reserve(ctx, r)
}

func (s *stalledInstance) isArmed() bool {
	select {
	case <-s.armed:
		return true
	default:
		return false
	}
}

// Rule: a ledger update is written only by a holder whose lease held
// throughout. Instance A stalls inside its update past its lease; B takes
// the ledger over, enters a refund and releases it; then A's renewal,
// sent in time but applied late, hands the free lease back to A. A's
// document is stale: writing it would erase B's refund, and both refunds
// would go out. A must start over and see B's.
func TestLedgerUpdateOutlivedByItsLease(t *testing.T) {
	mem := opsStore(t)
	stalled := &stalledInstance{KeyStore: mem, armed: make(chan struct{}), loadGate: make(chan struct{}),
		renewGate: make(chan struct{}), renewing: make(chan struct{})}
	s := startOps(t, mem, refserver.Config{Lenient: true})
	lease := func(cfg *idempay.Config) { cfg.Lease, cfg.Retry.MaxAttempts = idempay.MinLease, 1 }
	b := opsClient(t, s, mem, lease)
	a := opsClient(t, s, stalled, lease)
	charged(t, b, "o", 1500, false)
	ctx := context.Background()
	s.answer("rf-0", drop)
	_, err := b.Refund(ctx, refundOf("o", "rf-0", 100)) // unknown: A's update reads its record
	opErr(t, err, idempay.OutcomeUnknown)

	close(stalled.armed)
	errA := make(chan error, 1)
	go func() { _, err := a.Refund(ctx, refundOf("o", "rf-a", 1000)); errA <- err }()
	recv(t, stalled.renewing) // A holds the ledger, is stalled in its update, and its renewal is in flight
	rec, err := mem.Load(ctx, "ownapi:default/ledger", "o")
	require.NoError(t, err)
	require.NotEmpty(t, rec.LeaseOwner, "A holds the ledger")
	time.Sleep(time.Until(rec.LeaseUntil) + 10*time.Millisecond)

	_, err = b.Refund(ctx, refundOf("o", "rf-b", 1000))
	require.NoError(t, err, "B took the ledger over and refunded")
	close(stalled.renewGate) // A's renewal lands on the free ledger
	time.Sleep(20 * time.Millisecond)
	close(stalled.loadGate)

	err = recv(t, errA)
	assert.ErrorIs(t, err, idempay.ErrRefundExceeds, "A saw B's refund: only 400 left")
	assert.LessOrEqual(t, s.Ops().Refunded("o"), int64(1500), "never more than was charged")
	require.NoError(t, s.Ops().Check())
	l, err := b.Ledger(ctx, "o")
	require.NoError(t, err)
	assert.Len(t, l.Ops, 2, "rf-0 and rf-b: B's entry survived")
}
