package twoc2p_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/internal/chaos"
	"github.com/stretchr/testify/require"
)

var refundChaosIntents = flag.Int("chaos.refund-intents", 40, "intents refunded by the 2C2P refund chaos test (raise it for a long run)")

// tc2pRefundRates are the faults on every Payment Maintenance request,
// refunds and Refund Status lookups alike: 10% lost before 2C2P acts, 10%
// dropped while it acts, 10% answers lost after refunding, 5% 503s, 5%
// 500s.
var tc2pRefundRates = fakes.Rates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05, Internal: 0.05}

// tc2pRefundView shows the fake gateway to the refund chaos harness. A
// 2C2P refund is recorded under its idempotencyID, the key of the attempt
// that made it, so a refund ID's count sums the keys its record was ever
// sent under.
type tc2pRefundView struct {
	srvp   atomic.Pointer[twoc2ptest.Server] // set once the server runs; the hook reads it
	store  idempay.KeyStore
	losing atomic.Bool // the first pass: the lost refunds lose everything
	mu     sync.Mutex
	lost   map[string]string // invoiceNo → the ID of its refund whose answers are all lost
	aborts atomic.Int64
	byType sync.Map // processType → *atomic.Int64
}

func (v *tc2pRefundView) Refunds(id string) int {
	return madeUnder(nil, v.srv(), v.store, idempay.OpRefund, id)
}
func (v *tc2pRefundView) srv() *twoc2ptest.Server      { return v.srvp.Load() }
func (v *tc2pRefundView) Refunded(intent string) int64 { return v.srv().Ledger().Refunded(intent) }
func (v *tc2pRefundView) Check() error                 { return v.srv().CheckMoney() }
func (v *tc2pRefundView) Faults(on bool) {
	r := fakes.Rates{}
	if on {
		r = tc2pRefundRates
	}
	if err := v.srv().SetEndpointFaultRates(twoc2ptest.Maintenance, r); err != nil {
		panic(err)
	}
	v.losing.Store(on)
}

// lose marks refundID (of an intent whose ID is its invoiceNo) as one
// whose every answer of the first pass is lost.
func (v *tc2pRefundView) lose(intent, refundID string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lost == nil {
		v.lost = map[string]string{}
	}
	v.lost[intent] = refundID
}

// hook counts maintenance requests by processType and, in the first pass,
// loses the answers of the lost refunds: their refund requests are made
// and their answers dropped (Post, scripted by their key as they arrive),
// and every Refund Status lookup of their invoice is dropped before the
// gateway answers, so that only the second pass can settle them.
func (v *tc2pRefundView) hook(info twoc2ptest.RequestInfo) {
	if info.Endpoint != twoc2ptest.Maintenance {
		return
	}
	n, _ := v.byType.LoadOrStore(info.ProcessType, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if !v.losing.Load() {
		return
	}
	v.mu.Lock()
	refundID, ok := v.lost[info.InvoiceNo]
	v.mu.Unlock()
	if !ok {
		return
	}
	switch info.ProcessType {
	case "RS":
		v.aborts.Add(1)
		panic(http.ErrAbortHandler) // the lookup's answer is lost
	case "R":
		rec, err := v.store.Load(context.Background(), tc2pNS+"/refund", refundID)
		if err == nil && rec.Key == info.IdempotencyID {
			v.srv().FailMaintenance(info.IdempotencyID, fakes.Post)
		}
	}
}

func (v *tc2pRefundView) count(processType string) int64 {
	n, ok := v.byType.Load(processType)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// Rule: however Payment Maintenance fails, and however many goroutines and
// instances refund one charge at once, no refund is made twice (each
// resend follows a Refund Status proving it absent), no charge is refunded
// beyond what it was charged (the fake here refunds whatever it is asked:
// only the Client's ledger stands in the way), and every refund left
// unknown by the first pass is settled by the second.
func TestChaosRefundsTwoC2P(t *testing.T) {
	t.Run("lenient", func(t *testing.T) { refundChaos(t, *refundChaosIntents, true) })
	// As 2C2P refuses (40, 49): the same promises, and no refusal from
	// 2C2P, since the Client never sends what its ledger does not allow.
	t.Run("strict", func(t *testing.T) { refundChaos(t, max(*refundChaosIntents/4, 7), false) })
}

func refundChaos(t *testing.T, n int, lenient bool) {
	rep, v := runTwoC2PRefundChaos(t, n, lenient)
	st := v.srv().Stats().Maintenance
	for code := range st.Codes {
		if code != "00" && code != "99" { // 99: the injected 500s
			t.Errorf("2C2P answered %s %d times: the Client sent what its ledger does not allow", code, st.Codes[code])
		}
	}
	t.Logf("refund chaos 2C2P: %s", rep)
	t.Logf("refund chaos 2C2P: gateway saw %d maintenance requests (R %d, RS %d; faults %v; %d lookups of lost "+
		"refunds dropped); books: %d refunds, %d satang refunded of %d charged",
		st.Requests, v.count("R"), v.count("RS"), st.Faults, v.aborts.Load(), len(v.srv().Ledger().Ops()), rep.Refunded, rep.Charged)
	require.Positive(t, rep.Unknown, "the faults left some refunds unknown after the first pass")
	require.Equal(t, rep.Unknown, rep.Settled, "every unknown settled by the second pass")
}

func runTwoC2PRefundChaos(t *testing.T, n int, lenient bool) (chaos.RefundReport, *tc2pRefundView) {
	store := newStore()
	v := &tc2pRefundView{store: store}
	srv, p := opsServe(t, store, twoc2ptest.WithHook(v.hook), twoc2ptest.WithSettings(fakes.Settings{Lenient: lenient}),
		twoc2ptest.WithFaultRates(fakes.Rates{}, 7))
	v.srvp.Store(srv)
	retry := func(cfg *idempay.Config) {
		cfg.Provider = p
		cfg.Retry = chaos.Retry(8)
	}
	clients := []*idempay.Client{tc2pClient(t, srv.URL, store, retry), tc2pClient(t, srv.URL, store, retry)}
	intent := func(i int) string { return fmt.Sprintf("rchaos%04d", i) } // its own invoiceNo
	const amount = 100000                                                // ฿1,000.00
	rep := chaos.RunRefunds(t, chaos.RefundConfig{
		Intents: n, RefundsPer: 6, Workers: 8, Clients: len(clients), Duplicate: 5,
		Amount: amount, Currency: "THB", Seed: 5, Server: v, Intent: intent,
		Charge: func(ctx context.Context, i int) error {
			req := idempay.ChargeRequest{IntentID: intent(i), Amount: amount, Currency: "THB"}
			if _, err := clients[i%2].Charge(ctx, req); !errorsIsPending(err) {
				return fmt.Errorf("token request: %w", err)
			}
			if err := srv.Pay(intent(i)); err != nil {
				return err
			}
			_, err := clients[(i+1)%2].Charge(ctx, req)
			return err
		},
		Refund: func(ctx context.Context, client int, req idempay.RefundRequest) (*idempay.Operation, error) {
			return clients[client].Refund(ctx, req)
		},
		Ledger: func(ctx context.Context, intent string) (*idempay.Ledger, error) {
			return clients[0].Ledger(ctx, intent)
		},
		Lose: func(refundID string) {
			v.lose(refundID[:len("rchaos0000")], refundID)
		},
		LostEvery: 7,
	})
	return rep, v
}

func errorsIsPending(err error) bool { return idempay.OutcomeOf(err) == idempay.OutcomePending }
