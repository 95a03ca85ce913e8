// Command providers charges one test-mode payment through each real
// provider whose keys are set in the environment, with the durable file
// store, then charges it again to show the replay. Tests never reach a real
// provider; this example does, and only when you ask it to:
//
//	STRIPE_SECRET_KEY=sk_test_... go run ./examples/providers
//	OMISE_SECRET_KEY=skey_test_... OMISE_TOKEN=tokn_test_... go run ./examples/providers
//	TWOC2P_MERCHANT_ID=JT01 TWOC2P_SECRET_KEY=... go run ./examples/providers
//
// Use test-mode keys: a live key charges real money.
//
// Each run charges a new intent, named after the time. To resume one whose
// outcome was unknown, run again with its name, so that the same key is
// sent (a new intent is a new payment):
//
//	IDEMPAY_EXAMPLE_INTENT=example-20260101T000000 STRIPE_SECRET_KEY=sk_test_... go run ./examples/providers
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/idempay/idempay/provider/twoc2p"
)

type target struct {
	name, baseURL, secret string
	provider              idempay.Provider
	req                   idempay.ChargeRequest
}

func main() {
	intent := os.Getenv("IDEMPAY_EXAMPLE_INTENT")
	if intent == "" {
		intent = "example-" + time.Now().UTC().Format("20060102T150405")
	}
	var targets []target
	if k := os.Getenv("STRIPE_SECRET_KEY"); k != "" {
		targets = append(targets, target{"stripe", "https://api.stripe.com", k, stripe.Provider{},
			idempay.ChargeRequest{IntentID: intent, Amount: 1500, Currency: "JPY", Source: "pm_card_visa"}})
	}
	if k, tok := os.Getenv("OMISE_SECRET_KEY"), os.Getenv("OMISE_TOKEN"); k != "" && tok != "" {
		targets = append(targets, target{"omise", "https://api.omise.co", k, omise.Provider{},
			idempay.ChargeRequest{IntentID: intent, Amount: 10000, Currency: "THB", Source: idempay.Secret(tok)}})
	}
	if m, k := os.Getenv("TWOC2P_MERCHANT_ID"), os.Getenv("TWOC2P_SECRET_KEY"); m != "" && k != "" {
		targets = append(targets, target{"2c2p", "https://sandbox-pgw.2c2p.com", k, twoc2p.Provider{MerchantID: m},
			idempay.ChargeRequest{IntentID: intent, Amount: 10000, Currency: "THB", Description: "idempay example"}})
	}
	if len(targets) == 0 {
		fmt.Println("no provider keys set: see the comment at the top of examples/providers/main.go")
		return
	}
	store, err := filestore.Open(filepath.Join(os.TempDir(), "idempay-providers-example.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer store.Close()
	for _, t := range targets {
		if err := charge(t, store); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v (outcome %s)\n", t.name, err, idempay.OutcomeOf(err))
		}
	}
}

func charge(t target, store idempay.KeyStore) error {
	client, err := idempay.New(idempay.Config{BaseURL: t.baseURL, Credentials: idempay.Secret(t.secret),
		Provider: t.provider, Store: store})
	if err != nil {
		return err
	}
	defer client.Close(context.Background())
	for i := range 2 { // the second call answers from the store, with no request
		ch, err := client.Charge(context.Background(), t.req)
		switch idempay.OutcomeOf(err) {
		case idempay.OutcomeSucceeded:
			fmt.Printf("%s call %d: succeeded %s %d %s key=%s requests=%d replayed=%v\n", t.name, i+1, ch.ID,
				ch.Amount, ch.Currency, ch.Key, ch.Requests, ch.Replayed)
		case idempay.OutcomePending:
			// 3-D Secure, an offsite method, a 2C2P payment page: the
			// customer acts there; a later Charge or Settle learns how it ended.
			fmt.Printf("%s call %d: pending %s: send the customer to %s\n", t.name, i+1, ch.ID, ch.AuthorizeURL)
		case idempay.OutcomeFailed:
			return err
		case idempay.OutcomeUnknown:
			return fmt.Errorf("outcome unknown; resume with the same key: IDEMPAY_EXAMPLE_INTENT=%s: %w", t.req.IntentID, err)
		}
	}
	return nil
}
