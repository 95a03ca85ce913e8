package bench_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
	stripego "github.com/stripe/stripe-go/v82"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
)

// stripeKey is the API key the fake Stripe expects.
const stripeKey = "sk_test_idempay"

// The PaymentIntent every op creates and confirms, on both sides.
const (
	benchAmount   = 1500
	benchCurrency = "JPY"
	benchPM       = "pm_card_visa"
)

// benchMetadata is the caller's metadata. idempay adds idempay_intent to
// it; the stripe-go side sends idempay_intent itself, so that both bodies
// carry the same parameters and the fake does the same work for each.
var benchMetadata = map[string]string{"shop": "tokyo"}

// BenchmarkCreatePaymentIntent compares creating and confirming one
// PaymentIntent per op (amount 1500 JPY, payment method pm_card_visa,
// metadata shop=tokyo and idempay_intent=<order>) through the official
// stripe-go v82 and through idempay, against one fake Stripe server
// started once for the whole benchmark, with no faults:
//
//	(cd bench && go test -run '^$' -bench BenchmarkCreatePaymentIntent -count 6 . > /tmp/stripebench.txt)
//	benchstat -col /client /tmp/stripebench.txt
//
// What each side does per op:
//
//   - client=stripe-go: one POST /v1/payment_intents; stripe-go makes a
//     random Idempotency-Key for the call and keeps it only for its own
//     in-call network retries. It is not stored: a crash, or a caller
//     retrying after an error, sends a new key and may charge twice.
//   - client=idempay-memstore and client=idempay-filestore: idempay
//     reserves the intent's key in the KeyStore before the first byte is
//     sent (a map for memstore; a bbolt commit with fsync for filestore,
//     shared among concurrent callers), sends the same POST, then records
//     the outcome (state, PaymentIntent ID, response) in the store, a
//     second write (and fsync) for filestore.
//
// conc=N runs b.N ops from N goroutines taking the next op from a shared
// counter: ns/op is wall time divided by ops (the inverse of charges/s),
// p50-us and p99-us the latency one caller sees. Every side gets its own
// http.Client on an identical transport whose idle pool holds all N
// connections, so that connection churn does not decide the result.
// B/op and allocs/op count the whole process, the fake server's share
// included (about the same for every side, as every side sends the same
// request). Each op checks its result: no error and status succeeded.
func BenchmarkCreatePaymentIntent(b *testing.B) {
	srv := stripetest.NewServer([]stripetest.Option{stripetest.WithAPIKey(stripeKey)}...)
	url, stop := srv.URL, srv.Close
	defer stop()

	clients := []struct {
		name string
		make func(b *testing.B, hc *http.Client) benchCharge
	}{
		{"stripe-go", func(b *testing.B, hc *http.Client) benchCharge { return stripeGoCharge(url, hc) }},
		{"idempay-memstore", func(b *testing.B, hc *http.Client) benchCharge {
			return idempayCharge(b, url, hc, memstore.New())
		}},
		{"idempay-filestore", func(b *testing.B, hc *http.Client) benchCharge {
			s, err := filestore.Open(filepath.Join(b.TempDir(), "keys.db"))
			if err != nil {
				b.Fatalf("filestore.Open: %v", err)
			}
			b.Cleanup(func() {
				if err := s.Close(); err != nil {
					b.Errorf("filestore Close: %v", err)
				}
			})
			return idempayCharge(b, url, hc, s)
		}},
	}
	for _, c := range clients {
		for _, conc := range concurrency {
			b.Run(fmt.Sprintf("client=%s/conc=%d", c.name, conc), func(b *testing.B) {
				hc := benchHTTPClient(b, conc)
				benchOps(b, c.make(b, hc), conc)
			})
		}
	}

	// Every op was a real, distinct charge: one key and one ledger entry
	// per order.
	st := srv.Stats()
	charges := map[string]int{}
	for _, c := range srv.Ledger().Charges() {
		charges[c.Intent]++
	}
	for intent, keys := range st.Keys {
		if len(keys) != 1 || charges[intent] != 1 {
			b.Errorf("order %s: %d keys, %d charges; want 1 and 1", intent, len(keys), charges[intent])
			break
		}
	}
	if len(charges) != len(st.Keys) {
		b.Errorf("fake Stripe charged %d orders for %d sent", len(charges), len(st.Keys))
	}
	if st.Replays != 0 || len(st.Faults) != 0 || st.Requests != len(st.Keys) || st.Statuses[http.StatusOK] != st.Requests {
		b.Errorf("fake Stripe saw %d requests for %d orders, answers %v, %d replays, faults %v; want one 200 per order",
			st.Requests, len(st.Keys), st.Statuses, st.Replays, st.Faults)
	}
}

// stripeGoCharge creates and confirms with stripe-go v82, as its README
// shows, pointed at the fake through its backend configuration.
func stripeGoCharge(url string, hc *http.Client) benchCharge {
	backend := stripego.GetBackendWithConfig(stripego.APIBackend, &stripego.BackendConfig{
		URL:           stripego.String(url),
		HTTPClient:    hc,
		LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull},
	})
	sc := stripego.NewClient(stripeKey, stripego.WithBackends(&stripego.Backends{API: backend}))
	return func(ctx context.Context, id string) error {
		md := make(map[string]string, len(benchMetadata)+1)
		for k, v := range benchMetadata {
			md[k] = v
		}
		md[fakes.IntentMetadataKey] = id
		pi, err := sc.V1PaymentIntents.Create(ctx, &stripego.PaymentIntentCreateParams{
			Amount:        stripego.Int64(benchAmount),
			Currency:      stripego.String("jpy"),
			PaymentMethod: stripego.String(benchPM),
			Confirm:       stripego.Bool(true),
			AutomaticPaymentMethods: &stripego.PaymentIntentCreateAutomaticPaymentMethodsParams{
				Enabled:        stripego.Bool(true),
				AllowRedirects: stripego.String("never"),
			},
			Metadata: md,
		})
		if err != nil {
			return err
		}
		if pi.Status != stripego.PaymentIntentStatusSucceeded || pi.Amount != benchAmount {
			return fmt.Errorf("PaymentIntent %s: status %s, amount %d", pi.ID, pi.Status, pi.Amount)
		}
		return nil
	}
}

// idempayCharge charges through an idempay Client with its default retry
// policy on store.
func idempayCharge(b *testing.B, url string, hc *http.Client, store idempay.KeyStore) benchCharge {
	c, err := idempay.New(idempay.Config{BaseURL: url, Credentials: stripeKey, Store: store, HTTPClient: hc,
		Provider: stripe.Provider{APIVersion: "2024-06-20"}})
	if err != nil {
		b.Fatalf("idempay.New: %v", err)
	}
	return func(ctx context.Context, id string) error {
		ch, err := c.Charge(ctx, idempay.ChargeRequest{IntentID: id, Amount: benchAmount, Currency: benchCurrency,
			Source: benchPM, Metadata: benchMetadata})
		if err != nil {
			return err
		}
		if ch.State != idempay.StateSucceeded || ch.Status != "succeeded" || ch.Amount != benchAmount || ch.Replayed {
			return fmt.Errorf("charge %s: state %v, status %s, amount %d, replayed %v",
				ch.ID, ch.State, ch.Status, ch.Amount, ch.Replayed)
		}
		return nil
	}
}
