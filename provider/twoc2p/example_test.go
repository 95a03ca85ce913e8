package twoc2p_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fake2c2p"
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
	gateway := fake2c2p.New(fake2c2p.Config{MerchantID: "JT01", Secret: "merchant-secret-key"})
	ts := httptest.NewServer(gateway)
	defer ts.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL:     ts.URL,
		Credentials: "merchant-secret-key",
		Provider:    twoc2p.Provider{MerchantID: "JT01", PaymentChannel: []string{"CC"}},
		Store:       memstore.New(),
	})
	if err != nil {
		panic(err)
	}
	order := idempay.ChargeRequest{IntentID: "ORDER20240001", Amount: 123456, Currency: "THB",
		Description: "Order 2024-0001", ReturnURL: "https://shop.example/return"}

	ch, err := client.Charge(context.Background(), order)
	if err != nil {
		panic(err)
	}
	fmt.Println(ch.State, ch.AuthorizeURL != "")

	_ = gateway.Pay("ORDER20240001") // the customer pays on the 2C2P page

	ch, err = client.Charge(context.Background(), order)
	if err != nil {
		panic(err) // with idempay.OutcomeOf(err) saying whether money may have moved
	}
	fmt.Println(ch.State, ch.ReplayedFrom, ch.Amount, ch.Currency)
	// Output:
	// pending true
	// succeeded lookup 123456 THB
}
