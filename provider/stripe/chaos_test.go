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
	"github.com/stretchr/testify/require"
)

var chaosIntents = flag.Int("chaos.intents", 500, "intents charged by the chaos test (raise it for a long run)")

// chaosRates are the fault mix: 10% lost before Stripe acts, 10%
// crashes mid-processing, 10% answers lost after charging, 5% 503s.
var chaosRates = fakes.Rates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05}

// stripeView shows the fake to the chaos harness.
type stripeView struct{ srv *stripetest.Server }

func (v stripeView) Charges(id string) int   { return v.srv.Ledger().Count(id) }
func (v stripeView) Keys(id string) []string { return v.srv.Stats().Keys[id] }
func (v stripeView) LastReplayed(id string) (bool, bool) {
	r, ok := v.srv.Stats().LastReplayed[id]
	return r, ok
}
func (v stripeView) Faults(on bool) {
	r := fakes.Rates{}
	if on {
		r = chaosRates
	}
	if err := v.srv.SetFaultRates(r); err != nil {
		panic(err)
	}
}

func TestChaosStripe(t *testing.T) {
	opts := []stripetest.Option{stripetest.WithFaultRates(fakes.Rates{}, 7), stripetest.WithSettings(fakes.Settings{Lease: chaos.FakeLease})}
	srv, c, _ := setup(t, opts, func(cfg *idempay.Config) {
		cfg.Retry = chaos.Retry(8)
	})
	intent := func(i int) string { return fmt.Sprintf("chaos-%05d", i) }
	// Random faults rarely exhaust eight attempts, so a few intents lose
	// every answer for sure: Stripe charges them on the first attempt, and
	// only the second pass, answered by replays, can settle them.
	lost := min(5, *chaosIntents)
	for i := range lost {
		srv.Fail(intent(i), slices.Repeat([]fakes.Fault{fakes.Post}, 8)...)
	}
	rep := chaos.Run(t, chaos.Config{ServerLease: chaos.FakeLease,
		Intents: *chaosIntents, Workers: 16, Server: stripeView{srv}, Intent: intent, CheckReplayed: true,
		Charge: func(ctx context.Context, i int) (*idempay.Charge, error) {
			return c.Charge(ctx, idempay.ChargeRequest{IntentID: intent(i), Amount: int64(100 + i), Currency: "JPY",
				Source: "pm_card_visa"})
		},
	})
	require.NoError(t, srv.Ledger().Check(), "no intent charged twice")
	st := srv.Stats()
	require.Equal(t, *chaosIntents, srv.Ledger().Len(), "exactly one charge per intent")
	require.EqualValues(t, st.Requests, rep.Requests, "the client counted every request the fake received")
	require.Equal(t, st.Replays, rep.ReplayedSeen, "every replay sent was reported as one")
	require.GreaterOrEqual(t, rep.Unknown, lost, "the intents that lost every answer were unknown after the first pass")
	t.Logf("chaos Stripe: %s; fake saw %d POSTs, faults %v, statuses %v, replays %d",
		rep, st.Requests, st.Faults, st.Statuses, st.Replays)
}
