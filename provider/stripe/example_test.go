package stripe_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
)

// newExampleClient points a Client at url, where a fake Stripe stands in
// for https://api.stripe.com.
func newExampleClient(url string) *idempay.Client {
	client, err := idempay.New(idempay.Config{
		BaseURL:     url,
		Credentials: "sk_test_example",
		Provider:    stripe.Provider{APIVersion: "2024-06-20"},
		Store:       memstore.New(), // keystore/postgres or keystore/redis in production
		Retry:       idempay.RetryPolicy{InitialInterval: time.Millisecond},
	})
	if err != nil {
		panic(err)
	}
	return client
}

// A charge whose answer is lost is retried with the same idempotency key,
// and Stripe answers the retry with the stored PaymentIntent: one charge.
// The caller switches on the four outcomes alone.
func Example() {
	srv := stripetest.NewServer()
	url, stop := srv.URL, srv.Close
	defer stop()
	srv.FailNext(fakes.Post) // Stripe charges, the answer is lost
	client := newExampleClient(url)

	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-1001", Amount: 1500, Currency: "JPY", Source: "pm_card_visa",
		Metadata: map[string]string{"shop": "tokyo"},
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded: // paid: ship the order
		fmt.Println(ch.State, ch.Status, ch.Amount, ch.Currency)
		fmt.Println("attempts:", ch.Requests, "replayed from:", ch.ReplayedFrom)
		fmt.Println("charges at Stripe:", srv.Ledger().Count("order-1001"))
	case idempay.OutcomePending: // not paid yet: send the customer to ch.AuthorizeURL
		fmt.Println("pending:", ch.AuthorizeURL)
	case idempay.OutcomeFailed: // no money moved: ask for another card
		fmt.Println("failed:", err)
	case idempay.OutcomeUnknown: // money may have moved: charge the intent again later
		fmt.Println("unknown:", err)
	}
	// Output:
	// succeeded succeeded 1500 JPY
	// attempts: 2 replayed from: server
	// charges at Stripe: 1
}

// A decline is definite: no money moved, and the refusal carries Stripe's
// codes.
func Example_decline() {
	srv := stripetest.NewServer()
	url, stop := srv.URL, srv.Close
	defer stop()
	client := newExampleClient(url)

	_, err := client.Charge(context.Background(), idempay.ChargeRequest{
		IntentID: "order-1002", Amount: 1500, Currency: "JPY", Source: "pm_card_chargeDeclinedInsufficientFunds",
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
			fmt.Println(apiErr.Status, apiErr.Type, apiErr.Code, apiErr.DeclineCode)
		}
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
	}
	// Output:
	// outcome: failed
	// 402 card_error card_declined insufficient_funds
}

// 3-D Secure: the charge is pending, with a URL for the customer, and the
// order is not paid. Once the customer is back, Settle asks Stripe how it
// ended, without resending.
func Example_threeDSecure() {
	srv := stripetest.NewServer()
	url, stop := srv.URL, srv.Close
	defer stop()
	client := newExampleClient(url)
	ctx := context.Background()

	ch, err := client.Charge(ctx, idempay.ChargeRequest{
		IntentID: "order-1003", Amount: 2000, Currency: "USD", Source: "pm_card_threeDSecure2Required",
		ReturnURL: "https://shop.example/orders/1003/paid",
	})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("paid without 3-D Secure")
		return
	case idempay.OutcomePending: // money has not moved: never ship; send the customer to ch.AuthorizeURL
		fmt.Println(ch.State, ch.Status, ch.AuthorizeURL != "")
	case idempay.OutcomeFailed:
		fmt.Println("failed:", err)
		return
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
		return
	}

	srv.Complete(ch.ID, true) // the customer passes 3-D Secure
	done, err := client.Settle(ctx, "order-1003")
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded: // paid now: ship the order
		fmt.Println(done.State, done.Status, done.ReplayedFrom)
	case idempay.OutcomePending:
		fmt.Println("still waiting for the customer")
	case idempay.OutcomeFailed:
		fmt.Println("3-D Secure failed:", err)
	case idempay.OutcomeUnknown:
		fmt.Println("unknown:", err)
	}
	// Output:
	// pending requires_action true
	// succeeded succeeded lookup
}

// SearchQuery quotes the intent ID so that no ID can change the query.
func ExampleSearchQuery() {
	fmt.Println(stripe.SearchQuery("order-1004"))
	fmt.Println(stripe.SearchQuery("it's"))
	// Output:
	// metadata['idempay_intent']:'order-1004'
	// metadata['idempay_intent']:'it\'s'
}

// Validate refuses before anything is stored or sent what Stripe would
// refuse.
func ExampleProvider_Validate() {
	err := stripe.Provider{}.Validate(idempay.ChargeRequest{
		IntentID: "order-1005", Amount: 100_000_000, Currency: "JPY", Source: "pm_card_visa",
	})
	fmt.Println(errors.Is(err, idempay.ErrInvalidRequest))
	fmt.Println(err)
	// Output:
	// true
	// idempay: invalid Amount: 100000000 in Stripe's units exceeds Stripe's maximum 99999999
}
