package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
	"github.com/idempay/idempay/keystore/memstore"
)

// A refund, decided by its outcome alone. The refund's ID is the caller's,
// persisted before refunding (a row in its refunds table): every retry,
// restart and instance that refunds it with the same request sends one
// key, and it is never refunded twice.
func ExampleClient_Refund() {
	_, url, stop := refserver.Start(refserver.Config{}) // stands in for your payment API
	defer stop()
	client, err := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.Charge(ctx, idempay.ChargeRequest{IntentID: "order-3003", Amount: 1500, Currency: "JPY",
		Source: "tokn_test_visa"}); err != nil {
		log.Fatal(err)
	}

	req := idempay.RefundRequest{RefundID: "refund-3003-1", IntentID: "order-3003", Amount: 500, Currency: "JPY"}
	refund, err := client.Refund(ctx, req)
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println("refunded", refund.Amount, refund.Currency)
	case idempay.OutcomePending:
		fmt.Println("accepted; the provider pays it out later:", refund.ID) // Refund again later to settle it
	case idempay.OutcomeFailed:
		var amount *idempay.AmountError
		if errors.As(err, &amount) {
			fmt.Println("only", amount.Available, "left to refund")
		} else {
			fmt.Println("not refunded:", err) // no money moved
		}
	case idempay.OutcomeUnknown:
		fmt.Println("may have been refunded; refund again with the same request:", err)
	}

	// A second refund for more than is left is refused before it is sent.
	_, err = client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-3003-2", IntentID: "order-3003",
		Amount: 1200, Currency: "JPY"})
	fmt.Println(errors.Is(err, idempay.ErrRefundExceeds), idempay.OutcomeOf(err))

	l, _ := client.Ledger(ctx, "order-3003")
	fmt.Println("refunded", l.Refunded, "refundable", l.Refundable)
	// Output:
	// refunded 500 JPY
	// true failed
	// refunded 500 refundable 1000
}

// Authorise now, capture when the goods ship. Until it is captured, Charge
// answers the authorisation as pending (ErrAuthorized): a caller who ships
// on OutcomeSucceeded alone does not ship it as paid.
func ExampleClient_Capture() {
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New()})
	ctx := context.Background()
	req := idempay.ChargeRequest{IntentID: "order-4004", Amount: 1500, Currency: "JPY", Source: "tokn_test_visa",
		Extra: map[string]string{"capture": "false"}} // the own API's manual capture
	_, err := client.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err), errors.Is(err, idempay.ErrAuthorized))

	// One item was out of stock: capture the rest; the hold on the rest
	// is released.
	capture, err := client.Capture(ctx, idempay.CaptureRequest{CaptureID: "capture-4004", IntentID: "order-4004",
		Amount: 1200, Currency: "JPY"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(capture.Status, capture.Amount)

	ch, err := client.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err), ch.Captured)
	// Output:
	// pending true
	// captured 1200
	// succeeded 1200
}

// Void an authorisation instead of capturing it: no money moves, and the
// intent answers failed from then on.
func ExampleClient_Cancel() {
	_, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New()})
	ctx := context.Background()
	req := idempay.ChargeRequest{IntentID: "order-5005", Amount: 1500, Currency: "JPY", Source: "tokn_test_visa",
		Extra: map[string]string{"capture": "false"}}
	_, _ = client.Charge(ctx, req)

	_, err := client.Cancel(ctx, idempay.CancelRequest{CancelID: "cancel-5005", IntentID: "order-5005",
		Reason: "customer changed their mind"})
	fmt.Println(idempay.OutcomeOf(err))
	_, err = client.Charge(ctx, req)
	fmt.Println(idempay.OutcomeOf(err), errors.Is(err, idempay.ErrCanceled))
	// Output:
	// succeeded
	// failed true
}

// What the store knows of an intent's money, refunds in flight included.
func ExampleClient_Ledger() {
	api, url, stop := refserver.Start(refserver.Config{})
	defer stop()
	client, _ := idempay.New(idempay.Config{BaseURL: url, Store: memstore.New(),
		Retry: idempay.RetryPolicy{MaxAttempts: 2}})
	ctx := context.Background()
	_, _ = client.Charge(ctx, idempay.ChargeRequest{IntentID: "order-6006", Amount: 3000, Currency: "JPY",
		Source: "tokn_test_visa"})
	_, _ = client.Refund(ctx, idempay.RefundRequest{RefundID: "rf-6006-a", IntentID: "order-6006", Amount: 1000,
		Currency: "JPY"})
	api.InjectOrder("rf-6006-b", refserver.Post, refserver.Post) // refunded, both answers lost
	_, err := client.Refund(ctx, idempay.RefundRequest{RefundID: "rf-6006-b", IntentID: "order-6006",
		Amount: 500, Currency: "JPY"})
	fmt.Println(idempay.OutcomeOf(err))

	l, _ := client.Ledger(ctx, "order-6006")
	fmt.Println(l.Amount, l.Refunded, l.RefundsInFlight, l.Refundable)
	for _, op := range l.Ops {
		fmt.Println(op.Type, op.OpID, op.Amount, op.Outcome())
	}
	// Output:
	// unknown
	// 3000 1000 500 1500
	// refund rf-6006-a 1000 succeeded
	// refund rf-6006-b 500 unknown
}
