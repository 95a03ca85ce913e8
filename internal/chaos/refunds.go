package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// RefundServer is what a refund run needs to see of the fake provider.
type RefundServer interface {
	// Refunds is how many refunds the provider made under a refund ID.
	Refunds(refundID string) int
	// Refunded is the sum the provider refunded for an intent.
	Refunded(intent string) int64
	// Check reports any breach the provider's ledger can prove: a refund
	// made twice, an intent refunded more than it was charged.
	Check() error
	// Faults turns fault injection on or off.
	Faults(on bool)
}

// RefundConfig is one refund chaos run: Intents intents charged Amount
// each, then refunded by RefundsPer partial refunds each, whose amounts add
// up to more than the charge (so that the guard must refuse some), issued
// all at once by Workers goroutines through Clients instances sharing one
// store, every Duplicate-th refund issued twice at the same moment from two
// instances, with the provider's faults on; then every unknown refund issued
// again with faults off.
type RefundConfig struct {
	// Intents, RefundsPer, Workers, Clients and Duplicate size the run as
	// the type's doc says.
	Intents, RefundsPer, Workers, Clients, Duplicate int
	Amount                                           int64              // charged per intent, minor units
	Currency                                         string             // of the charges and refunds
	Seed                                             uint64             // draws the refunds' amounts and order
	Server                                           RefundServer       // the fake's books
	Intent                                           func(i int) string // names intent i
	// Charge charges intent i, with faults off; it must succeed.
	Charge func(ctx context.Context, i int) error
	// Refund refunds through instance client (0 to Clients-1).
	Refund func(ctx context.Context, client int, req idempay.RefundRequest) (*idempay.Operation, error)
	// Ledger reads an intent's ledger through any instance.
	Ledger func(ctx context.Context, intent string) (*idempay.Ledger, error)
	// Lose, if set, scripts every answer to a refund's first-pass requests
	// as lost: every LostEvery-th intent gets one such refund of one unit
	// (issued once, so Lose must cover the client's MaxAttempts requests),
	// which must end the first pass unknown and the second settled.
	Lose      func(refundID string)
	LostEvery int // how many intents apart the lost refunds are; 0 for none
	// ServerLease is the fake's key lease, waited out before the second
	// pass (Config.ServerLease).
	ServerLease time.Duration
}

// RefundReport is what a refund run saw.
type RefundReport struct {
	Intents, Refunds, Calls int   // intents, distinct refunds, Refund calls of the first pass
	Succeeded, Refused      int   // final outcomes
	Unknown                 int   // refunds unknown after the first pass
	Settled                 int   // of which the second pass settled
	Requests                int64 // requests counted by the clients
	Refunded, Charged       int64 // summed over intents
}

// String is the report on one line.
func (r RefundReport) String() string {
	return fmt.Sprintf("intents=%d refunds=%d calls=%d attempts=%d succeeded=%d refused=%d unknown=%d "+
		"settled_on_second_pass=%d refunded=%d of charged=%d", r.Intents, r.Refunds, r.Calls, r.Requests,
		r.Succeeded, r.Refused, r.Unknown, r.Settled, r.Refunded, r.Charged)
}

// call is one Refund call of the plan.
type call struct {
	client int
	req    idempay.RefundRequest
}

// RunRefunds runs the refunds and checks every promise: no refund made
// twice, no intent refunded more than it was charged, no refund failed but
// for a refusal before sending, every unknown settled by the second pass,
// and the provider's books equal to the clients' ledgers. Failures are
// reported on t.
func RunRefunds(t testing.TB, cfg RefundConfig) RefundReport {
	t.Helper()
	rep := RefundReport{Intents: cfg.Intents}
	chargeAll(t, cfg)
	calls, reqs := planRefunds(cfg)
	lost := planLost(cfg, reqs)
	calls = append(calls, lost...)
	rep.Refunds, rep.Calls = len(reqs), len(calls)
	cfg.Server.Faults(true)
	outcomes := refundPass(t, cfg, calls, &rep)
	for _, c := range lost {
		if o := outcomes[c.req.RefundID]; o != idempay.OutcomeUnknown {
			t.Errorf("chaos: refund %s lost every answer but ended %s", c.req.RefundID, o)
		}
	}
	cfg.Server.Faults(false)
	waitOutLeases(cfg.ServerLease)
	var again []call
	for id, o := range outcomes {
		if o == idempay.OutcomeUnknown || o == idempay.OutcomePending {
			rep.Unknown++
			again = append(again, call{req: reqs[id]})
		}
	}
	for id, o := range refundPass(t, cfg, again, &rep) {
		outcomes[id] = o
		if o != idempay.OutcomeUnknown && o != idempay.OutcomePending {
			rep.Settled++
		}
	}
	checkRefunds(t, cfg, reqs, outcomes, &rep)
	return rep
}

func chargeAll(t testing.TB, cfg RefundConfig) {
	t.Helper()
	cfg.Server.Faults(false)
	for i := range cfg.Intents {
		if err := cfg.Charge(context.Background(), i); err != nil {
			t.Fatalf("chaos: charge %s: %v", cfg.Intent(i), err)
		}
	}
}

// planRefunds draws each intent's refunds, about 1.4 times its charge in
// all, and the calls that issue them, shuffled.
func planRefunds(cfg RefundConfig) ([]call, map[string]idempay.RefundRequest) {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5bd1e995))
	reqs := map[string]idempay.RefundRequest{}
	var calls []call
	for i := range cfg.Intents {
		for j := range cfg.RefundsPer {
			share := cfg.Amount * 14 / 10 / int64(cfg.RefundsPer)
			req := idempay.RefundRequest{RefundID: fmt.Sprintf("%s-rf-%02d", cfg.Intent(i), j), IntentID: cfg.Intent(i),
				Amount: 1 + rng.Int64N(2*share), Currency: cfg.Currency}
			reqs[req.RefundID] = req
			calls = append(calls, call{client: rng.IntN(max(cfg.Clients, 1)), req: req})
			if cfg.Duplicate > 0 && (i*cfg.RefundsPer+j)%cfg.Duplicate == 0 {
				calls = append(calls, call{client: (calls[len(calls)-1].client + 1) % max(cfg.Clients, 1), req: req})
			}
		}
	}
	rng.Shuffle(len(calls), func(a, b int) { calls[a], calls[b] = calls[b], calls[a] })
	return calls, reqs
}

// planLost adds the refunds whose first-pass answers are all lost.
func planLost(cfg RefundConfig, reqs map[string]idempay.RefundRequest) []call {
	if cfg.Lose == nil || cfg.LostEvery <= 0 {
		return nil
	}
	var calls []call
	for i := 0; i < cfg.Intents; i += cfg.LostEvery {
		req := idempay.RefundRequest{RefundID: cfg.Intent(i) + "-rf-lost", IntentID: cfg.Intent(i), Amount: 1,
			Currency: cfg.Currency}
		cfg.Lose(req.RefundID)
		reqs[req.RefundID] = req
		calls = append(calls, call{req: req})
	}
	return calls
}

// refundPass issues the calls concurrently and returns each refund's
// outcome: a known one wins over unknown when two calls disagree.
func refundPass(t testing.TB, cfg RefundConfig, calls []call, rep *RefundReport) map[string]idempay.Outcome {
	var (
		mu   sync.Mutex
		out  = map[string]idempay.Outcome{}
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range max(cfg.Workers, 1) {
		wg.Go(func() {
			for n := int(next.Add(1)) - 1; n < len(calls); n = int(next.Add(1)) - 1 {
				c := calls[n]
				op, err := cfg.Refund(context.Background(), c.client, c.req)
				o, attempts := judge(t, c.req, op, err)
				mu.Lock()
				rep.Requests += int64(attempts)
				if prev, ok := out[c.req.RefundID]; !ok || prev == idempay.OutcomeUnknown {
					out[c.req.RefundID] = o
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// judge checks one call's result and returns its outcome. Failed is
// possible only as a refusal before sending: no fault injected here can
// prove that a refund sent moved no money.
func judge(t testing.TB, req idempay.RefundRequest, op *idempay.Operation, err error) (idempay.Outcome, int) {
	o := idempay.OutcomeOf(err)
	var oe *idempay.OpError
	attempts := 0
	if errors.As(err, &oe) {
		attempts = oe.Requests
	}
	switch {
	case err == nil && (op == nil || op.OpID != req.RefundID || op.IntentID != req.IntentID):
		t.Errorf("chaos: refund %s answered %+v", req.RefundID, op)
	case err == nil:
		attempts = op.Requests
	case o == idempay.OutcomeFailed && !errors.Is(err, idempay.ErrRefundExceeds):
		t.Errorf("chaos: refund %s failed, not as a refusal: %v", req.RefundID, err)
	}
	return o, attempts
}

// checkRefunds compares the outcomes with the provider's books and the
// clients' ledgers.
func checkRefunds(t testing.TB, cfg RefundConfig, reqs map[string]idempay.RefundRequest, outcomes map[string]idempay.Outcome, rep *RefundReport) {
	t.Helper()
	if err := cfg.Server.Check(); err != nil {
		t.Errorf("chaos: %v", err)
	}
	for id, req := range reqs {
		n, o := cfg.Server.Refunds(id), outcomes[id]
		switch {
		case o == idempay.OutcomeSucceeded && n == 1:
			rep.Succeeded++
		case o == idempay.OutcomeFailed && n == 0:
			rep.Refused++
		default:
			t.Errorf("chaos: refund %s of %d ended %s, and the provider made it %d times", id, req.Amount, o, n)
		}
	}
	for i := range cfg.Intents {
		checkIntent(t, cfg, cfg.Intent(i), rep)
	}
}

func checkIntent(t testing.TB, cfg RefundConfig, intent string, rep *RefundReport) {
	l, err := cfg.Ledger(context.Background(), intent)
	if err != nil {
		t.Errorf("chaos: ledger of %s: %v", intent, err)
		return
	}
	refunded := cfg.Server.Refunded(intent)
	rep.Refunded += refunded
	rep.Charged += l.Amount
	switch {
	case refunded > l.Amount:
		t.Errorf("chaos: intent %s refunded %d, more than the %d charged", intent, refunded, l.Amount)
	case l.Refunded != refunded:
		t.Errorf("chaos: intent %s: the ledger says %d refunded, the provider %d", intent, l.Refunded, refunded)
	case l.RefundsInFlight != 0:
		t.Errorf("chaos: intent %s: %d still in flight after the second pass", intent, l.RefundsInFlight)
	}
}
