package omise_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/require"
)

var chaosIntents = flag.Int("chaos.intents", 500, "intents charged by the chaos test (raise it for a long run)")

// chaosRates are the fault mix: 10% lost before Omise acts, 10%
// crashes mid-processing, 10% answers lost after charging, 5% 503s.
var chaosRates = fakes.Rates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05}

// chaosLookupFailures is the share of lookups that fail while faults are
// on: a guard whose lookup fails must stop with the outcome unknown,
// never resend, and the second pass must settle what it left.
const chaosLookupFailures = 0.10

// omiseView shows the fake to the chaos harness.
type omiseView struct{ srv *omisetest.Server }

func (v omiseView) Charges(id string) int   { return v.srv.Ledger().Count(id) }
func (v omiseView) Keys(id string) []string { return v.srv.Stats().Keys[id] }

// LastReplayed is never consulted (CheckReplayed is off): Omise marks no
// replay, so nothing can be compared.
func (v omiseView) LastReplayed(id string) (bool, bool) {
	_, ok := v.srv.Stats().LastReplayed[id]
	return false, ok
}
func (v omiseView) Faults(on bool) {
	r, lookups := fakes.Rates{}, 0.0
	if on {
		r, lookups = chaosRates, chaosLookupFailures
	}
	if err := errors.Join(v.srv.SetFaultRates(r), v.srv.SetLookupFailures(lookups)); err != nil {
		panic(err)
	}
}

// TestChaosOmise runs the chaos harness against a fake Omise that ignores
// Idempotency-Key, as the adapter must assume: exactly one charge per
// intent rests on the lookup before every resend and the single-use token.
// One lookup in ten fails during the first pass; the intents it leaves
// unknown are settled by the second. Another integration shares the
// account (one charge in five is its, with numbers in its metadata), so
// every list the lookups read holds charges that are not idempay's.
func TestChaosOmise(t *testing.T) {
	f := setup(t, []omisetest.Option{omisetest.WithFaultRates(fakes.Rates{}, 11), omisetest.WithNeighbors(5)}, func(cfg *idempay.Config) {
		// Every intent of the run falls in every lookup's window, so a
		// proof of absence reads them all: size the pass for the run and
		// its neighbours.
		cfg.Provider = omise.Provider{MaxListPages: max(omise.DefaultMaxListPages, *chaosIntents*2/100+2)}
		cfg.Retry = chaos.Retry(8)
	})
	intent := func(i int) string { return fmt.Sprintf("chaos-%05d", i) }
	rep := chaos.Run(t, chaos.Config{
		Intents: *chaosIntents, Workers: 16, Server: omiseView{f.srv}, Intent: intent,
		Charge: func(ctx context.Context, i int) (*idempay.Charge, error) {
			return f.client.Charge(ctx, idempay.ChargeRequest{IntentID: intent(i), Amount: int64(2000 + i),
				Currency: "THB", Source: idempay.Secret(fmt.Sprintf("tokn_test_chaos_%05d", i))})
		},
	})
	require.NoError(t, f.srv.Ledger().Check(), "no intent charged twice")
	st := f.srv.Stats()
	require.Equal(t, *chaosIntents, f.srv.Ledger().Len(), "exactly one charge per intent")
	require.EqualValues(t, st.Requests, rep.Requests, "the client counted every request the fake received")
	t.Logf("chaos Omise: %s; fake saw %d POSTs and %d list lookups, faults %v, statuses %v, error codes %v",
		rep, st.Requests, st.Lists, st.Faults, st.Statuses, st.Codes)
}

var refundChaosIntents = flag.Int("chaos.refund-intents", 60, "intents refunded by the refund chaos test (raise it for a long run)")

// refundChaosRates are the faults on refunds: 10% lost before Omise acts,
// 10% crashes mid-processing, 10% answers lost after refunding, 5% 503s,
// 5% 500s.
var refundChaosRates = fakes.Rates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05, Internal: 0.05}

// refundView shows the fake's books to the refund chaos harness.
type refundView struct{ srv *omisetest.Server }

func (v refundView) Refunds(id string) int        { return v.srv.Ledger().OpCount(id) }
func (v refundView) Refunded(intent string) int64 { return v.srv.Ledger().Refunded(intent) }
func (v refundView) Check() error                 { return v.srv.CheckMoney() }
func (v refundView) Faults(on bool) {
	r, lookups := fakes.Rates{}, 0.0
	if on {
		r, lookups = refundChaosRates, chaosLookupFailures
	}
	if err := errors.Join(v.srv.SetFaultRates(r), v.srv.SetLookupFailures(lookups)); err != nil {
		panic(err)
	}
}

// TestChaosRefundsOmise runs the refund chaos harness against a fake Omise
// that ignores Idempotency-Key, through two clients sharing one store:
// many partial refunds of each charge (more in all than was charged, fewer
// than Omise's 15), issued at once by 16 goroutines, one in five twice at
// the same moment from both clients, with one request in five lost or
// crashed, one in ten answered 5xx, and one lookup in ten failing. Exactly
// once rests on the lookup before every resend: no refund made twice, no
// charge refunded beyond what it charged, every unknown settled by the
// second pass, and the clients counted every request the fake received.
func TestChaosRefundsOmise(t *testing.T) {
	rep := runRefundChaos(t, *refundChaosIntents)
	t.Logf("refund chaos Omise: %s", rep)
}

func runRefundChaos(t *testing.T, n int) chaos.RefundReport {
	store := memstore.New()
	srv, base := startFake(t, store, []omisetest.Option{omisetest.WithFaultRates(fakes.Rates{}, 7), omisetest.WithTest(t)})
	retry := chaos.Retry(8)
	mod := func(cfg *idempay.Config) { cfg.Provider, cfg.Retry = quick, retry }
	clients := []*idempay.Client{newClient(t, base, store, mod), newClient(t, base, store, mod)}
	intent := func(i int) string { return fmt.Sprintf("rchaos-%04d", i) }
	lost := make([]fakes.Fault, retry.MaxAttempts) // every request of the first pass, lost before Omise acts
	for i := range lost {
		lost[i] = fakes.Pre
	}
	rep := chaos.RunRefunds(t, chaos.RefundConfig{
		Intents: n, RefundsPer: 10, Workers: 16, Clients: len(clients), Duplicate: 5,
		Amount: 150000, Currency: "THB", Seed: 3, Server: refundView{srv}, Intent: intent,
		Charge: func(ctx context.Context, i int) error {
			_, err := clients[i%2].Charge(ctx, thb(intent(i), fmt.Sprintf("tokn_test_rchaos_%04d", i)))
			return err
		},
		Refund: func(ctx context.Context, c int, req idempay.RefundRequest) (*idempay.Operation, error) {
			return clients[c].Refund(ctx, req)
		},
		Ledger: func(ctx context.Context, id string) (*idempay.Ledger, error) { return clients[0].Ledger(ctx, id) },
		// A lost answer is settled by the lookup at once at Omise; what
		// stays unknown through a pass is a refund every request of which
		// was lost before Omise acted (each resent only after a lookup
		// proved it absent).
		Lose: func(id string) { srv.Fail(id, lost...) }, LostEvery: 10,
	})
	require.Positive(t, rep.Refused, "the plan asks for more than was charged: some refunds were refused")
	require.Positive(t, rep.Succeeded)
	require.Positive(t, rep.Unknown, "the faults left refunds unknown for the second pass")
	st := srv.Stats()
	require.EqualValues(t, st.Ops.Requests, rep.Requests, "the clients counted every refund request the fake received")
	t.Logf("fake saw %d refund POSTs and %d refund lookups; faults %v, statuses %v, codes %v",
		st.Ops.Requests, st.RefundLookups, st.Ops.Faults, st.Ops.Statuses, st.Ops.Codes)
	return rep
}
