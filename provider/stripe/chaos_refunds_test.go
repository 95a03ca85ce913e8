package stripe_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/require"
)

var (
	chaosRefundIntents = flag.Int("chaos.refund_intents", 60, "intents refunded by the refund chaos test (raise it for a long run)")
	chaosRefundsPer    = flag.Int("chaos.refunds_per", 8, "partial refunds per intent in the refund chaos test")
)

// refundView shows the fake's books to the refund chaos harness.
type refundView struct{ srv *stripetest.Server }

func (v refundView) Refunds(id string) int        { return v.srv.Ledger().OpCount(id) }
func (v refundView) Refunded(intent string) int64 { return v.srv.Ledger().Refunded(intent) }
func (v refundView) Check() error                 { return v.srv.CheckMoney() }
func (v refundView) Faults(on bool) {
	r := fakes.Rates{}
	if on {
		r = chaosRates
	}
	if err := v.srv.SetFaultRates(r); err != nil {
		panic(err)
	}
}

// TestChaosStripeRefunds refunds every intent in many partial refunds
// adding up to more than it was charged, all at once, from 16 goroutines
// through two Client instances sharing one store, every third refund sent
// from both instances at the same moment, with the fault mix on
// every POST (lost before Stripe acts, crashes mid-processing, answers lost
// after refunding, 503s), and a few refunds losing every answer; then
// every unknown refund again with faults off. No refund is made twice, no
// intent refunded beyond its charge, every unknown is settled, and the
// fake's books equal the clients' ledgers.
//
//	go test -race -run ChaosStripeRefunds -v ./provider/stripe -chaos.refund_intents=500
func TestChaosStripeRefunds(t *testing.T) {
	const attempts = 8
	srv := stripetest.NewServer(stripetest.WithTest(t), stripetest.WithAPIKey(secret),
		stripetest.WithFaultRates(fakes.Rates{}, 11), stripetest.WithSettings(fakes.Settings{Lease: chaos.FakeLease}))
	store := memstore.New()
	clients := make([]*idempay.Client, 2)
	for i := range clients {
		clients[i] = newClient(t, srv.URL, store, func(cfg *idempay.Config) {
			cfg.HTTPClient = srv.Client()
			cfg.Retry = chaos.Retry(attempts)
		})
	}
	intent := func(i int) string { return fmt.Sprintf("rchaos-%04d", i) }
	rep := chaos.RunRefunds(t, chaos.RefundConfig{ServerLease: chaos.FakeLease,
		Intents: *chaosRefundIntents, RefundsPer: *chaosRefundsPer, Workers: 16, Clients: len(clients), Duplicate: 3,
		Amount: 10_000, Currency: "JPY", Seed: 11, Server: refundView{srv}, Intent: intent,
		Charge: func(ctx context.Context, i int) error {
			_, err := clients[0].Charge(ctx, idempay.ChargeRequest{IntentID: intent(i), Amount: 10_000, Currency: "JPY",
				Source: "pm_card_visa"})
			return err
		},
		Refund: func(ctx context.Context, client int, req idempay.RefundRequest) (*idempay.Operation, error) {
			return clients[client].Refund(ctx, req)
		},
		Ledger: func(ctx context.Context, id string) (*idempay.Ledger, error) { return clients[1].Ledger(ctx, id) },
		Lose: func(refundID string) {
			srv.Fail(refundID, slices.Repeat([]fakes.Fault{fakes.Post}, attempts)...)
		},
		LostEvery: 10,
	})
	st := srv.Stats()
	require.NoError(t, srv.CheckMoney(), "no refund made twice, none beyond its charge")
	require.Positive(t, rep.Refused, "the plan asks for more than was charged: some refunds are refused")
	require.Positive(t, rep.Unknown, "the faults left some refunds unknown after the first pass")
	require.Equal(t, rep.Unknown, rep.Settled, "every unknown refund settled by the second pass")
	require.EqualValues(t, st.Ops.Requests, rep.Requests, "the clients counted every refund request the fake received")
	t.Logf("chaos Stripe refunds: %s; fake saw %d refund POSTs, faults %v, statuses %v, replays %d, refunds made %d",
		rep, st.Ops.Requests, st.Ops.Faults, st.Ops.Statuses, st.Ops.Replays, len(srv.Ledger().Ops()))
}
