package idempay_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fake2c2p"
	"github.com/idempay/idempay/keystore/memstore"
)

// Build and sign a PGW v4.3 Payment Token request by hand. The invoice
// number comes from the order ID the caller has already persisted, never
// from the builder, and the amount from integer minor units.
func ExampleTwoC2PPaymentToken() {
	orderID := "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17" // persisted before this point
	invoiceNo, err := idempay.TwoC2PInvoiceNo(orderID, false)
	if err != nil {
		panic(err)
	}
	p := idempay.TwoC2PPaymentToken{
		MerchantID:     "JT01",
		InvoiceNo:      invoiceNo,
		Description:    "Order 3f2c9a1e",
		Amount:         123456, // satang: ฿1,234.56
		Currency:       "THB",
		PaymentChannel: []string{"CC"},
	}
	claims, err := p.JSON()
	if err != nil {
		panic(err)
	}
	body, err := p.Body("merchant-secret-key") // {"payload": "<JWT HS256>"}
	if err != nil {
		panic(err)
	}
	fmt.Println(invoiceNo)
	fmt.Println(string(claims))
	fmt.Println(string(body[:52]) + "...")

	// Invalid input is refused before anything is signed.
	p.InvoiceNo = "ORDER-" + orderID
	_, err = p.Body("merchant-secret-key")
	var ve *idempay.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field, errors.Is(err, idempay.ErrInvalidRequest))
	// Output:
	// 3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17
	// {"merchantID":"JT01","invoiceNo":"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17","description":"Order 3f2c9a1e","amount":1234.56,"currencyCode":"THB","paymentChannel":["CC"]}
	// {"payload":"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...
	// true InvoiceNo true
}

// Money goes to 2C2P as decimal major units, computed without floating
// point from the currency's ISO 4217 exponent.
func ExampleTwoC2PAmount() {
	for _, a := range []struct {
		minor    int64
		currency string
	}{{1500, "JPY"}, {123456, "THB"}, {5, "THB"}, {1234, "BHD"}} {
		s, _ := idempay.TwoC2PAmount(a.minor, a.currency)
		fmt.Println(a.currency, a.minor, "->", s)
	}
	// Output:
	// JPY 1500 -> 1500
	// THB 123456 -> 1234.56
	// THB 5 -> 0.05
	// BHD 1234 -> 1.234
}

// The invoice-number mapping: alphanumeric IDs as they are, UUIDs without
// hyphens, anything else a stable hashed form.
func ExampleTwoC2PInvoiceNo() {
	for _, id := range []string{"ORDER20240001", "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "ORDER-123"} {
		inv, _ := idempay.TwoC2PInvoiceNo(id, false)
		qr, _ := idempay.TwoC2PInvoiceNo(id, true)
		fmt.Println(inv, qr)
	}
	// Output:
	// ORDER20240001 ORDER20240001
	// 3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17 3f2czojoojqun352t5uz
	// ORDER123td7g2mtmcwqxn43c ORDEtd7g2mtmcwqxn43c
}

// Charge through 2C2P with a Client: the token request opens the payment
// (pending, with the page to send the customer to); once the customer has
// paid, charging the intent again settles it by Payment Inquiry. This runs
// against the fake gateway; in production BaseURL is
// https://pgw.2c2p.com (or https://sandbox-pgw.2c2p.com) and Credentials
// the merchant secret key.
func ExampleTwoC2P() {
	gateway := fake2c2p.New(fake2c2p.Config{MerchantID: "JT01", Secret: "merchant-secret-key"})
	ts := httptest.NewServer(gateway)
	defer ts.Close()

	client, err := idempay.New(idempay.Config{
		BaseURL:     ts.URL,
		Credentials: "merchant-secret-key",
		Provider:    idempay.TwoC2P{MerchantID: "JT01", PaymentChannel: []string{"CC"}},
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
