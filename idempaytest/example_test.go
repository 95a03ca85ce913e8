package idempaytest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

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
	fmt.Println(ch.Replayed, ch.ReplayedFrom, ch.Requests)
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
// and decides what to do with the order from the outcome, all four of
// them.
func checkout(ctx context.Context, c idempay.Charger, orderID string, card idempay.Secret) string {
	req := idempay.ChargeRequest{IntentID: orderID, Amount: 1500, Currency: "JPY", Source: card}
	for range 3 {
		ch, err := c.Charge(ctx, req)
		switch idempay.OutcomeOf(err) {
		case idempay.OutcomeSucceeded:
			return "paid " + ch.ID
		case idempay.OutcomePending:
			if errors.Is(err, idempay.ErrAttemptOpen) {
				// An earlier attempt, with other parameters, is pending:
				// no charge comes back for this call.
				return "pending: an earlier attempt waits for the customer"
			}
			return "pending: send the customer to " + ch.AuthorizeURL
		case idempay.OutcomeFailed:
			if errors.Is(err, idempay.ErrDeclined) {
				return "declined: ask for another card"
			}
			return "failed"
		case idempay.OutcomeUnknown:
			// Money may have moved: charge again with the same request,
			// never a new one.
		}
	}
	return "unknown: keep the order open"
}

// Testing checkout without any server: one order whose first answer is
// lost, one declined, one waiting for 3-D Secure, one never settled. A
// second checkout of the paid order is answered from the "store", as the
// real client would answer it.
func ExampleFakeCharger() {
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Unknown().SucceedWith(idempay.Charge{ID: "ch_1"})
	fake.OnIntent("order-2").Decline("insufficient_funds")
	fake.OnIntent("order-3").PendingWith(idempay.Charge{AuthorizeURL: "https://3ds.example/order-3"})
	fake.OnIntent("order-4").Unknown().Unknown().Unknown()
	ctx := context.Background()

	for _, order := range []string{"order-1", "order-2", "order-3", "order-4"} {
		fmt.Println(order, checkout(ctx, &fake, order, "tokn_123"))
	}
	fmt.Println(len(fake.CallsFor("order-1")), "calls for order-1")

	again, _ := fake.Charge(ctx, fake.CallsFor("order-1")[0].Request)
	fmt.Println(again.ID, again.Replayed, again.ReplayedFrom)
	// Output:
	// order-1 paid ch_1
	// order-2 declined: ask for another card
	// order-3 pending: send the customer to https://3ds.example/order-3
	// order-4 unknown: keep the order open
	// 2 calls for order-1
	// ch_1 true store
}

// The provider charged and the answer was lost (a Post fault): the
// caller's retry resumes the attempt under the same key and gets the
// provider's stored charge; Sent shows one key on the wire twice.
func ExampleIntentScript_Fault() {
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Fault(idempaytest.Post)
	ctx := context.Background()
	req := idempaytest.Request("order-1", 1500)

	_, err := fake.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err))
	ch, err := fake.Charge(ctx, req)
	fmt.Println(err, ch.Replayed, ch.ReplayedFrom)
	sent := fake.Sent("order-1")
	fmt.Println(len(sent), "requests, same key:", sent[0].Key == sent[1].Key)
	// Output:
	// unknown
	// <nil> true server
	// 2 requests, same key: true
}

// A declined customer tries another card on the same order: the second
// card is the intent's second attempt, with its own key. Once the order is
// paid, any later charge of it, even with the first card, answers that
// payment and charges nothing.
func ExampleFakeCharger_anotherCard() {
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").Decline("insufficient_funds").SucceedWith(idempay.Charge{ID: "ch_2"})
	ctx := context.Background()

	fmt.Println(checkout(ctx, &fake, "order-1", "tokn_empty_card"))
	fmt.Println(checkout(ctx, &fake, "order-1", "tokn_other_card"))
	fmt.Println(checkout(ctx, &fake, "order-1", "tokn_empty_card"))

	rec, _ := fake.Record(ctx, "order-1")
	fmt.Println("attempt", rec.Attempt, rec.State, "after", len(rec.History), "failed")
	ch, _ := fake.Charge(ctx, idempay.ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "tokn_3"})
	fmt.Println(ch.ID, ch.ReplayedFrom, "params differ:", ch.ParamsDiffer)
	// Output:
	// declined: ask for another card
	// paid ch_2
	// paid ch_2
	// attempt 2 succeeded after 1 failed
	// ch_2 store params differ: true
}

// A pending charge is not paid: it comes with ErrPending and stays pending
// until the script settles it, here as the provider's lookup would find it
// once the customer passed 3-D Secure.
func ExampleIntentScript_CompletePending() {
	var fake idempaytest.FakeCharger
	fake.OnIntent("order-1").PendingWith(idempay.Charge{AuthorizeURL: "https://3ds.example/order-1"})
	ctx := context.Background()
	req := idempay.ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "tokn_123"}

	ch, err := fake.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err), errors.Is(err, idempay.ErrPending), ch.AuthorizeURL)
	_, err = fake.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err))

	fake.OnIntent("order-1").CompletePending()
	ch, err = fake.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err), ch.State, ch.ReplayedFrom)
	// Output:
	// pending true https://3ds.example/order-1
	// pending
	// succeeded succeeded lookup
}

// A slow charge and an impatient caller (a browser that went away): the
// caller is told it stopped waiting, and the charge goes on; the next call
// gets its outcome.
func ExampleIntentScript_WaitFor() {
	var fake idempaytest.FakeCharger
	release := make(chan struct{})
	fake.OnIntent("order-1").WaitFor(release).SucceedWith(idempay.Charge{ID: "ch_slow"})
	req := idempay.ChargeRequest{IntentID: "order-1", Amount: 1500, Currency: "JPY", Source: "tokn_123"}

	impatient, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := fake.Charge(impatient, req)
	fmt.Println(idempay.OutcomeOf(err), errors.Is(err, idempay.ErrStoppedWaiting))

	close(release)
	ch, err := fake.Charge(context.Background(), req)
	fmt.Println(err, ch.ID)
	// Output:
	// unknown true
	// <nil> ch_slow
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
	fmt.Println(err, ch.ID, ch.ReplayedFrom, ch.Requests, mock.GetTotalCallCount())
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
