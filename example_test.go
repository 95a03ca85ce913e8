package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
)

// A charge with the durable file store: the key is on disk before the
// request leaves, so a crash and a restart resume with the same key.
func Example() {
	_, url, stop := refserver.Start(refserver.Config{}) // stands in for your payment API
	defer stop()

	dir, _ := os.MkdirTemp("", "idempay-example-")
	defer os.RemoveAll(dir)
	store, err := filestore.Open(filepath.Join(dir, "keys.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	client, err := idempay.New(idempay.Config{BaseURL: url, Store: store, Credentials: "sk_test_..."})
	if err != nil {
		log.Fatal(err)
	}
	req := idempay.ChargeRequest{IntentID: "order-1001", Amount: 1500, Currency: "JPY", Source: "tokn_test_visa"}
	ch, err := client.Charge(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.State, ch.Amount, ch.Currency, ch.Attempts, ch.Replayed)

	// Charging the same intent again sends nothing: the store answers.
	again, _ := client.Charge(context.Background(), req)
	fmt.Println(again.ID == ch.ID, again.Key == ch.Key, again.ReplayedFrom)
	// Output:
	// succeeded 1500 JPY 1 false
	// true true store
}

// Deciding what an error means for the money.
func ExampleOutcomeOf() {
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New(),
		Retry: idempay.RetryPolicy{MaxAttempts: 2}})

	api.InjectOrder("order-2002", refserver.Post, refserver.Post) // both answers lost after charging
	_, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-2002", Amount: 990, Currency: "JPY", Source: "tokn_test_visa"})

	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("ship the order")
	case idempay.OutcomeFailed:
		fmt.Println("ask for another card")
	case idempay.OutcomeUnknown:
		// Money may have moved: keep the order open and charge it again
		// later with the same request; idempay resends the same key.
		fmt.Println("unknown; retry later:", errors.Is(err, idempay.ErrOutcomeUnknown))
	}
	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-2002", Amount: 990, Currency: "JPY", Source: "tokn_test_visa"})
	fmt.Println(err == nil, ch.Replayed, ch.ReplayedFrom, api.Ledger().Count("order-2002"))
	// Output:
	// unknown; retry later: true
	// true true server 1
}

// A decline is definite, and typed.
func ExampleClient_Charge_decline() {
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New()})

	_, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-3003", Amount: 5000, Currency: "JPY", Source: refserver.DeclineTokenPrefix})
	var apiErr *idempay.APIError
	if errors.Is(err, idempay.ErrDeclined) && errors.As(err, &apiErr) {
		fmt.Println("declined:", apiErr.Code, apiErr.DeclineCode, idempay.OutcomeOf(err))
	}
	// Output:
	// declined: card_declined generic_decline failed
}

// Bad input is refused before anything is stored or sent.
func ExampleChargeRequest_Validate() {
	err := idempay.ChargeRequest{IntentID: "order-4004", Amount: -1, Currency: "JPY"}.Validate()
	var ve *idempay.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field, errors.Is(err, idempay.ErrInvalidRequest))
	// Output:
	// true Amount true
}

// After a restart, list what is unresolved and charge each intent again
// with its original request, rebuilt from your own order records.
func ExampleClient_Unresolved() {
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	store := memstore.New()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: store, Retry: idempay.RetryPolicy{MaxAttempts: 1}})
	req := idempay.ChargeRequest{IntentID: "order-5005", Amount: 2500, Currency: "JPY", Source: "tokn_test_visa"}
	api.InjectOrder("order-5005", refserver.Post)
	_, _ = client.Charge(context.Background(), req) // the answer is lost

	open, _ := client.Unresolved(context.Background(), 100)
	for _, rec := range open {
		ch, err := client.Charge(context.Background(), req) // rebuilt from rec.IntentID in real code
		fmt.Println(rec.IntentID, rec.State, err == nil && ch.Key == rec.Key)
	}
	// Output:
	// order-5005 open true
}

// Secrets print as [redacted] everywhere.
func ExampleSecret() {
	s := idempay.Secret("sk_live_123")
	fmt.Println(s, fmt.Sprintf("%q %#v", s, s))
	// Output:
	// [redacted] [redacted] [redacted]
}
