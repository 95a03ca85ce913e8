package idempay_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/stretchr/testify/require"
)

var refundChaosIntents = flag.Int("chaos.refund-intents", 60, "intents refunded by the refund chaos test (raise it for a long run)")

// refundRates are the chaos faults on refunds: 10% lost before the server
// acts, 10% crashes mid-processing, 10% answers lost after refunding, 5%
// 503s, 5% 500s that release the key.
var refundRates = refserver.FaultRates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05, Internal: 0.05}

// refundView shows a reference server to the refund chaos harness.
type refundView struct{ s *opsServer }

func (v refundView) Refunds(id string) int        { return v.s.Ops().Count(id) }
func (v refundView) Refunded(intent string) int64 { return v.s.Ops().Refunded(intent) }
func (v refundView) Check() error                 { return errors.Join(v.s.Ledger().Check(), v.s.Ops().Check()) }
func (v refundView) Faults(on bool) {
	rates := refserver.FaultRates{}
	if on {
		rates = refundRates
	}
	if err := v.s.SetFaults(rates); err != nil {
		panic(err)
	}
}

// Rule: however the network and the server fail, and however many
// goroutines and instances refund one intent at once, no refund is made
// twice, no intent is refunded more than it was charged (the server here
// would refund anything), and every unknown refund is settled by a second
// pass.
func TestChaosRefundsOwnAPI(t *testing.T) {
	rep := runRefundChaos(t, *refundChaosIntents)
	t.Logf("refund chaos own API: %s", rep)
}

// BenchmarkChaosRefundsOwnAPI is the long run: go test -run '^$' -bench
// ChaosRefunds -benchtime 3x .
func BenchmarkChaosRefundsOwnAPI(b *testing.B) {
	for range b.N {
		rep := runRefundChaos(b, 600)
		b.ReportMetric(float64(rep.Requests)/float64(rep.Calls), "requests/call")
	}
}

func runRefundChaos(t testing.TB, n int) chaos.RefundReport {
	store := opsStore(t)
	s := startOps(t, store, refserver.Config{Lease: chaos.FakeLease, Seed: 11, Lenient: true})
	retry := func(cfg *idempay.Config) {
		cfg.Retry = chaos.Retry(8)
	}
	clients := []*idempay.Client{opsClient(t, s, store, retry), opsClient(t, s, store, retry)}
	intent := func(i int) string { return fmt.Sprintf("rchaos-%04d", i) }
	lost := make([]refserver.Fault, 8) // MaxAttempts: every answer of the first pass
	for i := range lost {
		lost[i] = refserver.Post
	}
	rep := chaos.RunRefunds(t, chaos.RefundConfig{ServerLease: chaos.FakeLease,
		Intents: n, RefundsPer: 6, Workers: 16, Clients: len(clients), Duplicate: 5,
		Amount: 10000, Currency: "JPY", Seed: 3, Server: refundView{s}, Intent: intent,
		Charge: func(ctx context.Context, i int) error {
			req := order(intent(i))
			req.Amount = 10000
			_, err := clients[i%2].Charge(ctx, req)
			return err
		},
		Refund: func(ctx context.Context, c int, req idempay.RefundRequest) (*idempay.Operation, error) {
			return clients[c].Refund(ctx, req)
		},
		Ledger: func(ctx context.Context, id string) (*idempay.Ledger, error) { return clients[0].Ledger(ctx, id) },
		// A few refunds lose every answer: the second pass always has work.
		Lose: func(id string) { s.InjectOrder(id, lost...) }, LostEvery: 20,
	})
	require.Positive(t, rep.Refused, "the plan asks for more than was charged: some refunds were refused")
	require.Positive(t, rep.Succeeded)
	st := s.Stats().Ops
	require.EqualValues(t, st.Requests, rep.Requests, "the clients counted every request the server received")
	t.Logf("server saw %d refund requests, %d replays, %d lookups, faults %v", st.Requests, st.Replays, st.Lookups, s.Stats().Faults)
	return rep
}
