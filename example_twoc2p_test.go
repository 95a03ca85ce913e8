package idempay_test

import (
	"errors"
	"fmt"

	"github.com/idempay/idempay"
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
	// 0u3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17
	// {"merchantID":"JT01","invoiceNo":"0u3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17","description":"Order 3f2c9a1e","amount":1234.56,"currencyCode":"THB","paymentChannel":["CC"]}
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
// hyphens, other IDs encoded, and a hashed form for what fits no other.
// Every form but the hashed one reads back to its intent ID.
func ExampleTwoC2PInvoiceNo() {
	for _, id := range []string{"ORDER20240001", "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "ORDER-123"} {
		inv, _ := idempay.TwoC2PInvoiceNo(id, false)
		qr, _ := idempay.TwoC2PInvoiceNo(id, true)
		back, ok := idempay.TwoC2PIntentOfInvoiceNo(qr)
		fmt.Println(inv, qr, back, ok)
	}
	// Output:
	// ORDER20240001 ORDER20240001 ORDER20240001 true
	// 0u3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17 0y3fzojoojqun352t5uz  false
	// 0zj5jeirksfuytemy 0zj5jeirksfuytemy ORDER-123 true
}
