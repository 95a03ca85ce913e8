package idempaytest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/jarcoal/httpmock"
)

// A lost answer: the server charges, then drops the connection. The client
// retries with the same key and gets the stored answer; the customer is
// charged once. (In a test, idempaytest.NewClient(t, srv) builds the same
// client and checks for duplicates when the test ends.)
func ExampleServer() {
	srv := idempaytest.NewServer()
	defer srv.Close()
	client, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(),
		Store: memstore.New(), Retry: idempaytest.FastRetry()})
	if err != nil {
		log.Fatal(err)
	}

	srv.Fail("order-1", idempaytest.Post)
	ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Replayed, ch.ReplayedFrom, ch.Attempts)
	fmt.Println("charges:", srv.Charges("order-1"), "requests:", srv.Requests("order-1"),
		"keys:", len(srv.Keys("order-1")))
	// Output:
	// true server 2
	// charges: 1 requests: 2 keys: 1
}

// Two instances that do not share their KeyStore send two keys for one
// intent, and the server charges twice: CheckNoDuplicates says so.
func ExampleServer_CheckNoDuplicates() {
	srv := idempaytest.NewServer()
	defer srv.Close()
	for range 2 {
		client, _ := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Store: memstore.New()})
		_, _ = client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
	}

	var dup *idempaytest.DuplicateChargeError
	if err := srv.CheckNoDuplicates(); errors.As(err, &dup) {
		d := dup.Duplicates[0]
		fmt.Println(d.IntentID, len(d.ChargeIDs), "charges,", len(d.Keys), "keys")
	}
	// Output:
	// order-1 2 charges, 2 keys
}

// checkout stands for the code under test: it takes any idempay.Charger
// and decides what to do with the order from the outcome.
func checkout(ctx context.Context, c idempay.Charger, orderID string) string {
	req := idempay.ChargeRequest{IntentID: orderID, Amount: 1500, Currency: "JPY", Source: "tokn_123"}
	for range 3 {
		ch, err := c.Charge(ctx, req)
		switch idempay.OutcomeOf(err) {
		case idempay.OutcomeSucceeded:
			return "paid " + ch.ID
		case idempay.OutcomeFailed:
			if errors.Is(err, idempay.ErrDeclined) {
				return "declined"
			}
			return "failed"
		}
		// Unknown: charge again with the same request, never a new one.
	}
	return "unknown, keep the order open"
}

// Testing checkout without any server: script one unknown outcome, then
// let the fake succeed. A second checkout of the same order is answered
// from the "store", as the real client would.
func ExampleFakeCharger() {
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Unknown().SucceedWith(idempay.Charge{ID: "ch_1"})
	fake.OnIntent("order-2").Decline("insufficient_funds")
	fake.OnIntent("order-3").Unknown().Unknown().Unknown()
	ctx := context.Background()

	fmt.Println(checkout(ctx, &fake, "order-1"))
	fmt.Println(checkout(ctx, &fake, "order-2"))
	fmt.Println(checkout(ctx, &fake, "order-3"))
	fmt.Println(len(fake.CallsFor("order-1")), "calls for order-1")

	again, _ := fake.Charge(ctx, fake.CallsFor("order-1")[0].Request)
	fmt.Println(again.ID, again.Replayed, again.ReplayedFrom)
	// Output:
	// paid ch_1
	// declined
	// unknown, keep the order open
	// 2 calls for order-1
	// ch_1 true store
}

// Charging an intent again with other parameters is refused, as by the
// real client: a new payment needs a new intent ID.
func ExampleFakeCharger_intentMismatch() {
	var fake idempaytest.FakeCharger
	ctx := context.Background()
	_, _ = fake.Charge(ctx, idempaytest.Request("order-1", 1500))

	_, err := fake.Charge(ctx, idempaytest.Request("order-1", 2000))
	fmt.Println(errors.Is(err, idempay.ErrIntentMismatch), idempay.OutcomeOf(err))
	// Output:
	// true unknown
}

// Responders on a MockTransport passed in Config.HTTPClient: the first
// answer is lost after "sending", the retry gets the replay.
func ExampleDropResponder() {
	mock := httpmock.NewMockTransport()
	mock.RegisterResponder(http.MethodPost, "https://pay.example"+idempaytest.ChargePath,
		idempaytest.DropResponder().Then(idempaytest.ReplayResponder("ch_1")))
	client, err := idempay.New(idempay.Config{BaseURL: "https://pay.example", Store: memstore.New(),
		HTTPClient: &http.Client{Transport: mock}, Retry: idempaytest.FastRetry()})
	if err != nil {
		log.Fatal(err)
	}

	ch, err := client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
	fmt.Println(err, ch.ID, ch.ReplayedFrom, ch.Attempts, mock.GetTotalCallCount())
	// Output:
	// <nil> ch_1 server 2 2
}

// A decline is definite and carries the provider's codes.
func ExampleDeclineResponder() {
	mock := httpmock.NewMockTransport()
	mock.RegisterResponder(http.MethodPost, "https://pay.example"+idempaytest.ChargePath,
		idempaytest.DeclineResponder("insufficient_funds"))
	client, _ := idempay.New(idempay.Config{BaseURL: "https://pay.example", Store: memstore.New(),
		HTTPClient: &http.Client{Transport: mock}})

	_, err := client.Charge(context.Background(), idempaytest.Request("order-1", 1500))
	var apiErr *idempay.APIError
	if errors.Is(err, idempay.ErrDeclined) && errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.DeclineCode, idempay.OutcomeOf(err))
	}
	// Output:
	// 402 insufficient_funds failed
}
