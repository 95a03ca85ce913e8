package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/jarcoal/httpmock"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/filestore"
	"github.com/idempay/idempay/keystore/memstore"
)

// A charge with the durable file store: the key is on disk before the
// request leaves, so a crash and a restart resume with the same key.
func Example() {
	api := idempaytest.NewServer() // stands in for your payment API
	defer api.Close()

	dir, _ := os.MkdirTemp("", "idempay-example-")
	defer os.RemoveAll(dir)
	store, err := filestore.Open(filepath.Join(dir, "keys.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	client, err := idempay.New(idempay.Config{BaseURL: api.URL, Store: store, Credentials: "sk_test_..."})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())
	req := idempay.ChargeRequest{IntentID: "order-1001", Amount: 1500, Currency: "JPY", Source: idempaytest.Token}
	ch, err := client.Charge(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.State, ch.Amount, ch.Currency, ch.Requests, ch.Replayed)

	// Charging the same intent again sends nothing: the store answers.
	again, _ := client.Charge(context.Background(), req)
	fmt.Println(again.ID == ch.ID, again.Key == ch.Key, again.ReplayedFrom)
	// Output:
	// succeeded 1500 JPY 1 false
	// true true store
}

// Deciding what a charge did with the money: a caller who switches on the
// outcome alone is right in all four cases.
func ExampleOutcomeOf() {
	api := idempaytest.NewServer()
	defer api.Close()
	client, _ := idempay.New(idempay.Config{BaseURL: api.URL, Store: memstore.New(),
		Retry: idempay.RetryPolicy{MaxAttempts: 2}})
	req := idempay.ChargeRequest{IntentID: "order-2002", Amount: 990, Currency: "JPY", Source: idempaytest.Token}

	api.Fail("order-2002", idempaytest.Post, idempaytest.Post) // both answers lost after charging
	ch, err := client.Charge(context.Background(), req)
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("ship the order", ch.ID)
	case idempay.OutcomePending:
		fmt.Println("send the customer to", ch.AuthorizeURL)
	case idempay.OutcomeFailed:
		fmt.Println("ask for another card")
	case idempay.OutcomeUnknown:
		// Money may have moved: keep the order open and charge it again
		// later with the same request; idempay resends the same key.
		fmt.Println("unknown; retry later:", errors.Is(err, idempay.ErrOutcomeUnknown))
	}
	ch, err = client.Charge(context.Background(), req)
	fmt.Println(err == nil, ch.Replayed, ch.ReplayedFrom, api.Charges("order-2002"))
	// Output:
	// unknown; retry later: true
	// true true server 1
}

// A pending charge (3-D Secure, a hosted page) is its own outcome: the
// charge comes back with ErrPending, so code that only checks err never
// ships an order that is not paid.
func ExampleClient_Charge_pending() {
	mock := httpmock.NewMockTransport()
	mock.RegisterResponder(http.MethodPost, "https://payments.example/payments/charge",
		idempaytest.PendingResponder("ch_3ds"))
	client, _ := idempay.New(idempay.Config{BaseURL: "https://payments.example", Store: memstore.New(),
		HTTPClient: &http.Client{Transport: mock}})

	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-6006", Amount: 4200, Currency: "JPY", Source: idempaytest.Token})
	fmt.Println(idempay.OutcomeOf(err), errors.Is(err, idempay.ErrPending), ch.ID, ch.State)
	// Output:
	// pending true ch_3ds pending
}

// A decline is definite, and typed. Another card on the same order is a
// second attempt, with a key of its own.
func ExampleClient_Charge_anotherCard() {
	api := idempaytest.NewServer()
	defer api.Close()
	client, _ := idempay.New(idempay.Config{BaseURL: api.URL, Store: memstore.New()})
	req := idempay.ChargeRequest{IntentID: "order-3003", Amount: 5000, Currency: "JPY", Source: idempaytest.DeclineToken}

	_, err := client.Charge(context.Background(), req)
	var apiErr *idempay.APIError
	if errors.Is(err, idempay.ErrDeclined) && errors.As(err, &apiErr) {
		fmt.Println("declined:", apiErr.Code, apiErr.DeclineCode, idempay.OutcomeOf(err))
	}
	req.Source = idempaytest.Token // the customer tries another card
	ch, err := client.Charge(context.Background(), req)
	fmt.Println(err == nil, ch.Attempt, len(api.Keys("order-3003")), api.Charges("order-3003"))
	// Output:
	// declined: card_declined generic_decline failed
	// true 2 2 1
}

// Bad input is refused before anything is stored or sent.
func ExampleChargeRequest_Validate() {
	err := idempay.ChargeRequest{IntentID: "order-4004", Amount: -1, Currency: "JPY"}.Validate()
	var ve *idempay.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field, errors.Is(err, idempay.ErrInvalidRequest))
	// Output:
	// true Amount true
}

// After a restart, go through what is unresolved and charge each intent
// again with its original request, rebuilt from your own order records.
func ExampleClient_Unresolved() {
	api := idempaytest.NewServer()
	defer api.Close()
	client, _ := idempay.New(idempay.Config{BaseURL: api.URL, Store: memstore.New(), Retry: idempay.RetryPolicy{MaxAttempts: 1}})
	req := idempay.ChargeRequest{IntentID: "order-5005", Amount: 2500, Currency: "JPY", Source: idempaytest.Token}
	api.Fail("order-5005", idempaytest.Post)
	_, _ = client.Charge(context.Background(), req) // the answer is lost

	for rec, err := range client.Unresolved(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		ch, err := client.Charge(context.Background(), req) // rebuilt from rec.ID in real code
		fmt.Println(rec.ID, rec.State, err == nil && ch.Key == rec.Key)
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
