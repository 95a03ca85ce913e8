package omise_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
)

// newExampleClient points a Client at url, where a fake Omise stands in
// for https://api.omise.co.
func newExampleClient(url string) *idempay.Client {
	client, err := idempay.New(idempay.Config{
		BaseURL:     url,
		Credentials: "skey_test_example",
		Provider:    omise.Provider{},
		Store:       memstore.New(), // keystore/postgres or keystore/redis in production
		Retry:       idempay.RetryPolicy{InitialInterval: time.Millisecond},
	})
	if err != nil {
		panic(err)
	}
	return client
}

// The answer of a charge is lost. Omise documents no de-duplication by
// key, so the client looks the charge up before resending, finds it, and
// sends nothing more: one charge. The caller switches on the four
// outcomes alone.
func Example() {
	srv := omisetest.NewServer()
	url, stop := srv.URL, srv.Close
	defer stop()
	srv.FailNext(fakes.Post) // Omise charges, the answer is lost
	client := newExampleClient(url)

	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-2001", Amount: 150000, Currency: "THB", Source: "tokn_test_5086xl7ddjbases4sq3i",
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded: // paid: ship the order
		fmt.Println(ch.State, ch.Status, ch.Amount, ch.Currency)
		fmt.Println("attempts:", ch.Requests, "settled by:", ch.ReplayedFrom)
		fmt.Println("charges at Omise:", srv.Ledger().Count("order-2001"))
	case idempay.OutcomePending: // not paid yet: send the customer to ch.AuthorizeURL
		fmt.Println("pending:", ch.AuthorizeURL)
	case idempay.OutcomeFailed: // no money moved: ask for another card
		fmt.Println("failed:", err)
	case idempay.OutcomeUnknown: // money may have moved: charge the intent again later
		fmt.Println("unknown:", err)
	}
	// Output:
	// succeeded successful 150000 THB
	// attempts: 1 settled by: lookup
	// charges at Omise: 1
}

// A decline is a charge with status failed, reported as a definite
// failure with Omise's failure code.
func Example_decline() {
	srv := omisetest.NewServer()
	url, stop := srv.URL, srv.Close
	defer stop()
	client := newExampleClient(url)

	_, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-2002", Amount: 1500, Currency: "JPY", Source: "tokn_test_decline",
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("paid")
	case idempay.OutcomePending:
		fmt.Println("pending")
	case idempay.OutcomeFailed: // no money moved: another card may begin attempt 2 of the intent
		var apiErr *idempay.APIError
		if errors.Is(err, idempay.ErrDeclined) && errors.As(err, &apiErr) {
			fmt.Println("outcome:", idempay.OutcomeOf(err))
			fmt.Println(apiErr.Status, apiErr.Code)
		}
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
	}
	// Output:
	// outcome: failed
	// 200 insufficient_fund
}

// 3-D Secure: the charge is pending, with a URL for the customer, and the
// order is not paid. The return callback names the charge; IntentOfCharge
// ties it back to its intent, and Settle records how it ended.
func Example_threeDSecure() {
	srv := omisetest.NewServer()
	base, stop := srv.URL, srv.Close
	defer stop()
	client := newExampleClient(base)
	ctx := context.Background()

	ch, err := client.Charge(ctx, idempay.ChargeRequest{
		IntentID: "order-2003", Amount: 150000, Currency: "THB", Source: "tokn_test_3ds",
		ReturnURL: "https://shop.example/omise/return",
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("paid without 3-D Secure")
		return
	case idempay.OutcomePending: // money has not moved: never ship; send the customer to ch.AuthorizeURL
		fmt.Println(ch.State, ch.AuthorizeURL != "")
	case idempay.OutcomeFailed:
		fmt.Println("failed:", err)
		return
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
		return
	}

	srv.Complete(ch.ID, true) // the customer passes 3-D Secure

	// In the return handler: from the charge ID to the intent, then settle.
	u, _ := url.Parse(base)
	target := idempay.Target{BaseURL: u, Credentials: "skey_test_example"}
	intent, err := omise.Provider{}.IntentOfCharge(ctx, nil, target, ch.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	done, err := client.Settle(ctx, intent)
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded: // paid now: ship the order
		fmt.Println(intent, done.State, done.Status)
	case idempay.OutcomePending:
		fmt.Println("still waiting for the customer")
	case idempay.OutcomeFailed:
		fmt.Println("3-D Secure failed:", err)
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
	}
	// Output:
	// pending true
	// order-2003 succeeded successful
}

// A saved card can be charged again, so the adapter refuses it unless
// SavedCards says the caller accepts that such intents settle only by
// finding their charge.
func ExampleProvider_Validate() {
	req := idempay.ChargeRequest{IntentID: "order-2004", Amount: 150000, Currency: "THB",
		Source: "card_test_5086xl7ddjbases4sq3i", Customer: "cust_test_5086xl7ddjbases4sq3i"}
	fmt.Println(errors.Is(omise.Provider{}.Validate(req), idempay.ErrInvalidRequest))
	fmt.Println(omise.Provider{SavedCards: true}.Validate(req))
	// Output:
	// true
	// <nil>
}
