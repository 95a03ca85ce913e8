package stripetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
)

// An idempay.Client against the fake: Stripe charges, the answer is lost,
// the retry with the same key gets the stored PaymentIntent; the books
// show one charge, and CheckMoney finds nothing wrong. In a test, give
// stripetest.WithTest(t) and the check runs when the test ends.
func ExampleNewServer() {
	srv := stripetest.NewServer()
	defer srv.Close()
	client, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Credentials: "sk_test_x",
		Provider: stripe.Provider{}, Store: memstore.New(), Retry: idempay.RetryPolicy{InitialInterval: time.Millisecond}})
	if err != nil {
		panic(err)
	}
	srv.Fail("order-1", fakes.Post)
	ch, err := client.Charge(context.Background(), idempay.ChargeRequest{IntentID: "order-1", Amount: 1500,
		Currency: "JPY", Source: "pm_card_visa"})
	fmt.Println(idempay.OutcomeOf(err), ch.ReplayedFrom == idempay.ReplayFromServer)
	fmt.Println("charges:", srv.Ledger().Count("order-1"), "check:", srv.CheckMoney())
	// Output:
	// succeeded true
	// charges: 1 check: <nil>
}
