package omisetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
)

// An idempay.Client against the fake: Omise charges, the answer is lost;
// Omise replays nothing, so the client settles by looking the charge up
// instead of charging the single-use token again. One charge.
func ExampleNewServer() {
	srv := omisetest.NewServer()
	defer srv.Close()
	client, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Credentials: "skey_test_x",
		Provider: omise.Provider{}, Store: memstore.New(), Retry: idempay.RetryPolicy{InitialInterval: time.Millisecond}})
	if err != nil {
		panic(err)
	}
	srv.Fail("order-1", fakes.Post)
	_, err = client.Charge(context.Background(), idempay.ChargeRequest{IntentID: "order-1", Amount: 150000,
		Currency: "THB", Source: "tokn_test_1"})
	fmt.Println(idempay.OutcomeOf(err))
	fmt.Println("charges:", srv.Ledger().Count("order-1"), "check:", srv.CheckMoney())
	// Output:
	// succeeded
	// charges: 1 check: <nil>
}
