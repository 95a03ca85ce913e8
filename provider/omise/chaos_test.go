package omise_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/internal/chaos"
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
	f := setup(t, []omisetest.Option{omisetest.WithFaultRates(fakes.Rates{}, 11), omisetest.WithNeighbours(5)}, func(cfg *idempay.Config) {
		// Every intent of the run falls in every lookup's window, so a
		// proof of absence reads them all: size the pass for the run and
		// its neighbours.
		cfg.Provider = omise.Provider{MaxListPages: max(omise.DefaultMaxListPages, *chaosIntents*2/100+2)}
		cfg.Retry = idempay.RetryPolicy{MaxAttempts: 8, InitialInterval: 2 * time.Millisecond,
			MaxInterval: 20 * time.Millisecond, MaxElapsed: 10 * time.Second}
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
	require.EqualValues(t, st.Requests, rep.Attempts, "the client counted every request the fake received")
	t.Logf("chaos Omise: %s; fake saw %d POSTs and %d list lookups, faults %v, statuses %v, error codes %v",
		rep, st.Requests, st.Lists, st.Faults, st.Statuses, st.Codes)
}
