package idempaytest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
)

// A consumer's test says what its code means to refund; CheckMoney then
// sees the code that retried an unknown refund under a new refund ID,
// which the books alone cannot (1,000 is within the 1,500 charged).
func ExampleServer_IntendRefund() {
	srv := idempaytest.NewServer()
	defer srv.Close()
	client, err := idempay.New(idempay.Config{BaseURL: srv.URL, HTTPClient: srv.Client(), Store: memstore.New(),
		Retry: idempay.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.Charge(ctx, idempaytest.Request("order-1", 1500)); err != nil {
		log.Fatal(err)
	}
	srv.IntendRefund("order-1", 500) // the order's one refund

	srv.Fail("refund-1", idempaytest.Post) // refunded; the answer is lost
	_, err = client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-1", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	fmt.Println(idempay.OutcomeOf(err))
	// The bug: a new refund ID for a refund whose outcome is unknown.
	_, err = client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-2", IntentID: "order-1", Amount: 500, Currency: "JPY"})
	fmt.Println(err)

	var me *fakes.MoneyError
	fmt.Println(errors.As(srv.CheckMoney(), &me) && me.Has(fakes.RefundedBeyondIntent))
	// Output:
	// unknown
	// <nil>
	// true
}
