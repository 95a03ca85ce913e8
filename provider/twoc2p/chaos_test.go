package twoc2p_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/require"
)

var chaosIntents = flag.Int("chaos.intents", 500, "intents charged by the chaos test (raise it for a long run)")

// The 2C2P chaos mix: the 10% of each failure mode and 5% 503s on
// token requests, and a few lost or refused inquiries on top, so that some
// intents stay unknown after the first pass and must be settled by the
// second.
var (
	tc2pChaosToken   = fakes.Rates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05}
	tc2pChaosInquiry = fakes.Rates{Pre: 0.03, Unavailable: 0.03}
)

// tc2pView shows the fake gateway to the chaos harness. 2C2P has no
// replay header, so LastReplayed has nothing to say.
type tc2pView struct{ srv *twoc2ptest.Server }

func (v tc2pView) Charges(id string) int {
	if _, ok := v.srv.Transaction(id); ok { // chaos intent IDs are their invoice numbers
		return 1
	}
	return 0
}
func (v tc2pView) Keys(id string) []string          { return v.srv.Stats().Token.Keys[id] }
func (v tc2pView) LastReplayed(string) (bool, bool) { return false, false }
func (v tc2pView) Faults(on bool) {
	tok, inq := fakes.Rates{}, fakes.Rates{}
	if on {
		tok, inq = tc2pChaosToken, tc2pChaosInquiry
	}
	if err := errors.Join(v.srv.SetFaultRates(tok), v.srv.SetEndpointFaultRates(twoc2ptest.Inquiry, inq)); err != nil {
		panic(err)
	}
}

// TestChaosTwoC2P charges -chaos.intents intents through faults, then
// checks: exactly one transaction per intent and none besides, no token
// request ever met an existing invoice (every resend was preceded by an
// inquiry proving there was none), every transaction whose answer was lost
// was settled by inquiry, and, once the customers pay, every intent settles
// as succeeded by inquiry without another token request.
func TestChaosTwoC2P(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{opts: []twoc2ptest.Option{twoc2ptest.WithFaultRates(fakes.Rates{}, 11)}}, store, tc2pSameInvoice)
	c := tc2pClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Retry = chaos.Retry(8)
	})
	intent := func(i int) string { return fmt.Sprintf("chaos%05d", i) }
	amount := func(i int) int64 { return int64(100 + i) }

	// The last result of each intent, to see how each was settled.
	var mu sync.Mutex
	last := map[string]*idempay.Charge{}
	rep := chaos.Run(t, chaos.Config{
		// Every token request opens a payment that waits for the customer:
		// pending is the settled answer here, never a success.
		Intents: *chaosIntents, Workers: 16, Server: tc2pView{srv}, Intent: intent, Pending: true,
		Charge: func(ctx context.Context, i int) (*idempay.Charge, error) {
			req := idempay.ChargeRequest{IntentID: intent(i), Amount: amount(i), Currency: "THB"}
			ch, err := c.Charge(ctx, req)
			if o := idempay.OutcomeOf(err); o == idempay.OutcomeSucceeded || o == idempay.OutcomePending {
				mu.Lock()
				last[req.IntentID] = ch
				mu.Unlock()
			}
			return ch, err
		},
	})

	st := srv.Stats()
	require.Equal(t, *chaosIntents, rep.Pending+rep.Settled, "every intent pending, on the first pass or the second")
	require.Zero(t, rep.Succeeded, "nobody has paid yet: nothing may read as succeeded")
	require.NoError(t, srv.CheckInvoices())
	require.Equal(t, *chaosIntents, srv.Len(), "one transaction per intent and none besides")
	require.Zero(t, st.Existing, "no token request met an existing invoice: every resend followed a not-found")
	require.EqualValues(t, st.Token.Requests, rep.Requests, "the client counted every token request the gateway received")

	byLookup, undelivered := 0, 0
	for _, txn := range srv.Transactions() {
		ch := last[txn.InvoiceNo]
		require.NotNil(t, ch, txn.InvoiceNo)
		require.Equal(t, idempay.StatePending, ch.State, txn.InvoiceNo)
		if !txn.Answered {
			undelivered++
			require.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom,
				"intent %s: its token answer was lost, so only an inquiry can have settled it", txn.InvoiceNo)
		}
		if ch.ReplayedFrom == idempay.ReplayFromLookup {
			byLookup++
		}
	}

	// The customers pay; charging again settles every intent by inquiry.
	require.Equal(t, *chaosIntents, srv.PayAll())
	sentBefore := st.Token.Requests
	succeeded := 0
	for i := range *chaosIntents {
		ch, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: intent(i), Amount: amount(i), Currency: "THB"})
		require.NoError(t, err, intent(i))
		txn, _ := srv.Transaction(intent(i))
		require.Equal(t, idempay.StateSucceeded, ch.State)
		require.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
		require.Equal(t, txn.TranRef, ch.ID)
		require.Equal(t, amount(i), ch.Amount)
		succeeded++
	}
	end := srv.Stats()
	require.Equal(t, sentBefore, end.Token.Requests, "settling sent no token request")

	t.Logf("chaos 2C2P: %s", rep)
	t.Logf("chaos 2C2P: gateway saw %d token requests (faults %v), %d inquiries (faults %v); %d transactions, "+
		"%d with a lost answer, all settled by inquiry; %d intents settled by inquiry in all; 9015 answers %d; "+
		"after payment %d/%d succeeded by inquiry with %d further inquiries",
		st.Token.Requests, st.Token.Faults, st.Inquiry.Requests, st.Inquiry.Faults, srv.Len(), undelivered, byLookup,
		st.Existing, succeeded, *chaosIntents, end.Inquiry.Requests-st.Inquiry.Requests)
}
