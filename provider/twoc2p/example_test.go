package twoc2p_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/twoc2p"
)

// Charge through 2C2P with a Client: the token request opens the payment
// (pending, with the page to send the customer to); once the customer has
// paid, charging the intent again settles it by Payment Inquiry. This runs
// against the fake gateway; in production BaseURL is
// https://pgw.2c2p.com (or https://sandbox-pgw.2c2p.com) and Credentials
// the merchant secret key.
func ExampleProvider() {
	gateway := twoc2ptest.NewServer(twoc2ptest.WithMerchant("JT01", "merchant-secret-key"))
	defer gateway.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL:     gateway.URL,
		Credentials: "merchant-secret-key",
		Provider:    twoc2p.Provider{MerchantID: "JT01", PaymentChannel: []string{"CC"}},
		Store:       memstore.New(),
	})
	if err != nil {
		panic(err)
	}
	order := idempay.ChargeRequest{IntentID: "ORDER20240001", Amount: 123456, Currency: "THB",
		Description: "Order 2024-0001", ReturnURL: "https://shop.example/return"}

	// A caller switches on the four outcomes alone.
	show := func(ch *idempay.Charge, err error) {
		switch idempay.OutcomeOf(err) {
		case idempay.OutcomeSucceeded: // paid: ship the order
			fmt.Println(ch.State, ch.ReplayedFrom, ch.Amount, ch.Currency)
		case idempay.OutcomePending: // not paid yet: never ship; send the customer to ch.AuthorizeURL
			fmt.Println(ch.State, ch.AuthorizeURL != "")
		case idempay.OutcomeFailed: // no money moved
			fmt.Println("failed:", err)
		case idempay.OutcomeUnknown: // money may have moved: charge the intent again later
			fmt.Println("unknown:", err)
		}
	}

	show(client.Charge(context.Background(), order))

	_ = gateway.Pay("ORDER20240001") // the customer pays on the 2C2P page

	show(client.Charge(context.Background(), order)) // settled by Payment Inquiry
	// Output:
	// pending true
	// succeeded lookup 123456 THB
}

// Sign a request of 2C2P's older redirect payment API (version 7.0, as
// 2C2P's WooCommerce plugin sends it) and check the answer 2C2P posts back.
func ExampleRedirectRequestHash() {
	secret := idempay.Secret("merchant-secret-key")
	amount, _ := twoc2p.RedirectAmount(150000) // THB 1,500.00: twelve digits, decimals implied
	form := map[string]string{"version": "7.0", "merchant_id": "JT01", "payment_description": "Order 1001",
		"order_id": "1001", "currency": "764", "amount": amount, "result_url_1": "https://shop.example/return"}
	hash, err := twoc2p.RedirectRequestHash(secret, form)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(hash), amount)

	// 2C2P's answer, as posted back to result_url_1 (a few of its fields).
	answer := map[string]string{"version": "7.0", "merchant_id": "JT01", "order_id": "1001", "currency": "764",
		"amount": amount, "payment_status": "000", "hash_value": "not-what-2c2p-signed"}
	fmt.Println(errors.Is(twoc2p.VerifyRedirectResponse(secret, "7.0", answer), twoc2p.ErrRedirectHash))
	// Output:
	// 40 000000150000
	// true
}

// Read a Payment Token answer with the merchant's signer: only a signed
// answer can say a token was issued.
func ExampleParseResponse() {
	signer := idempay.TwoC2PSigner{Secret: "merchant-secret-key"}
	signed := twoc2ptest.Body(twoc2ptest.SignHS256(`{"paymentToken":"tok","webPaymentUrl":"https://pay.example/tok",`+
		`"respCode":"0000","respDesc":"Success"}`, "merchant-secret-key"))
	r, err := twoc2p.ParseResponse(signer, signed)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Signed, r.RespCode, r.PaymentToken)

	_, err = twoc2p.ParseResponse(signer, []byte(`{"respCode":"0000","paymentToken":"forged"}`))
	fmt.Println(errors.Is(err, twoc2p.ErrUnsigned))
	// Output:
	// true 0000 tok
	// true
}

// Refund a 2C2P charge through Payment Maintenance. The adapter needs the
// merchant's RSA private key and 2C2P's public key (in production:
// twoc2p.ParseMaintenanceKeys of the PEM files, and MaintenanceURL set to
// 2C2P's Payment Action host); the fake gateway makes 2C2P's key and is
// told the merchant's.
func ExampleProvider_refund() {
	merchantKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	gateway := twoc2ptest.NewServer(twoc2ptest.WithMerchant("JT01", "merchant-secret-key"),
		twoc2ptest.WithMerchantKey(&merchantKey.PublicKey))
	defer gateway.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL:     gateway.URL,
		Credentials: "merchant-secret-key",
		Provider: twoc2p.Provider{MerchantID: "JT01",
			Maintenance: twoc2p.MaintenanceKeys{Merchant: merchantKey, Gateway: gateway.GatewayKey()}},
		Store: memstore.New(),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	order := idempay.ChargeRequest{IntentID: "ORDER20240002", Amount: 150000, Currency: "THB"}
	_, _ = client.Charge(ctx, order) // pending: the customer pays on 2C2P's page
	_ = gateway.Pay("ORDER20240002") // which they do
	if _, err := client.Charge(ctx, order); err != nil {
		panic(err)
	}

	refund, err := client.Refund(ctx, idempay.RefundRequest{RefundID: "refund-0002-1", IntentID: "ORDER20240002",
		Amount: 50000, Currency: "THB"})
	switch idempay.OutcomeOf(err) {
	case idempay.OutcomeSucceeded:
		fmt.Println(refund.Status, refund.Amount, refund.Currency)
	default: // pending, failed or unknown: see Client.Refund
		fmt.Println(err)
	}
	ledger, _ := client.Ledger(ctx, "ORDER20240002")
	fmt.Println("refundable:", ledger.Refundable)
	// Output:
	// RF 50000 THB
	// refundable: 100000
}
