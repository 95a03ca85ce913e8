package idempay_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoC2PPaymentTokenRefuses checks each field rule, and that invalid
// input is refused before anything is signed.
func TestTwoC2PPaymentTokenRefuses(t *testing.T) {
	base := tc2pVectorPayload
	for _, tc := range []struct {
		field string
		mod   func(p *idempay.TwoC2PPaymentToken)
	}{
		{"MerchantID", func(p *idempay.TwoC2PPaymentToken) { p.MerchantID = "" }},
		{"MerchantID", func(p *idempay.TwoC2PPaymentToken) { p.MerchantID = strings.Repeat("1", 26) }},
		{"MerchantID", func(p *idempay.TwoC2PPaymentToken) { p.MerchantID = "JT-01" }},
		{"InvoiceNo", func(p *idempay.TwoC2PPaymentToken) { p.InvoiceNo = "" }},
		{"InvoiceNo", func(p *idempay.TwoC2PPaymentToken) { p.InvoiceNo = "ORDER-1" }},
		{"InvoiceNo", func(p *idempay.TwoC2PPaymentToken) { p.InvoiceNo = strings.Repeat("a", 51) }},
		{"InvoiceNo", func(p *idempay.TwoC2PPaymentToken) { p.PaymentChannel = []string{"QR"} }}, // 32 > 20
		{"PaymentChannel", func(p *idempay.TwoC2PPaymentToken) { p.PaymentChannel = nil }},
		{"PaymentChannel", func(p *idempay.TwoC2PPaymentToken) { p.PaymentChannel = []string{"C C"} }},
		{"Description", func(p *idempay.TwoC2PPaymentToken) { p.Description = "" }},
		{"Description", func(p *idempay.TwoC2PPaymentToken) { p.Description = strings.Repeat("ฟ", 251) }},
		{"Description", func(p *idempay.TwoC2PPaymentToken) { p.Description = "a\x00b" }},
		{"Amount", func(p *idempay.TwoC2PPaymentToken) { p.Amount = 0 }},
		{"Amount", func(p *idempay.TwoC2PPaymentToken) { p.Amount = -100 }},
		{"Amount", func(p *idempay.TwoC2PPaymentToken) { p.Amount = idempay.MaxAmount + 1 }},
		{"Currency", func(p *idempay.TwoC2PPaymentToken) { p.Currency = "764" }},
		{"Currency", func(p *idempay.TwoC2PPaymentToken) { p.Currency = "" }},
		{"IdempotencyID", func(p *idempay.TwoC2PPaymentToken) { p.IdempotencyID = strings.Repeat("k", 101) }},
		{"IdempotencyID", func(p *idempay.TwoC2PPaymentToken) { p.IdempotencyID = "with space" }},
		{"Request3DS", func(p *idempay.TwoC2PPaymentToken) { p.Request3DS = "yes" }},
		{"FrontendReturnURL", func(p *idempay.TwoC2PPaymentToken) { p.FrontendReturnURL = "/relative" }},
		{"BackendReturnURL", func(p *idempay.TwoC2PPaymentToken) { p.BackendReturnURL = "ftp://x.example/" }},
		{"BackendReturnURL", func(p *idempay.TwoC2PPaymentToken) { p.BackendReturnURL = "https://u:p@x.example/" }},
		{"UserDefined3", func(p *idempay.TwoC2PPaymentToken) { p.UserDefined[2] = strings.Repeat("u", 151) }},
		{"UserDefined5", func(p *idempay.TwoC2PPaymentToken) { p.UserDefined[4] = "line\nbreak" }},
	} {
		p := base
		p.PaymentChannel = append([]string(nil), base.PaymentChannel...)
		tc.mod(&p)
		err := p.Validate()
		var ve *idempay.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", tc.field, err)
		assert.Equal(t, tc.field, ve.Field)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
		assert.NotContains(t, err.Error(), "u:p@", "a URL's credentials are not echoed")

		tok, err := p.Sign(tc2pSecret)
		assert.Empty(t, tok, "nothing is signed for invalid input")
		assert.True(t, errors.As(err, &ve))
		body, err := p.Body(tc2pSecret)
		assert.Nil(t, body)
		assert.Error(t, err)
	}
}

func TestTwoC2PPaymentTokenOptionalFieldsLeftOut(t *testing.T) {
	p := idempay.TwoC2PPaymentToken{MerchantID: "JT01", InvoiceNo: "A1", Description: "d", Amount: 1500,
		Currency: "JPY", PaymentChannel: []string{"CC", "QR"}}
	b, err := p.JSON()
	require.NoError(t, err)
	require.Equal(t, `{"merchantID":"JT01","invoiceNo":"A1","description":"d","amount":1500,"currencyCode":"JPY","paymentChannel":["CC","QR"]}`, string(b))
}

func TestTwoC2PInquiryBody(t *testing.T) {
	b, err := idempay.TwoC2PInquiry{MerchantID: "JT01", InvoiceNo: "A1", Locale: "en"}.Body(tc2pSecret)
	require.NoError(t, err)
	var body struct{ Payload string }
	require.NoError(t, json.Unmarshal(b, &body), "the inquiry body is {\"payload\": a JWT under the secret}")
	claims, err := idempay.TwoC2PSigner{Secret: tc2pSecret}.Verify(body.Payload)
	require.NoError(t, err)
	assert.JSONEq(t, `{"merchantID":"JT01","invoiceNo":"A1","locale":"en"}`, string(claims))

	for _, q := range []idempay.TwoC2PInquiry{{InvoiceNo: "A1"}, {MerchantID: "JT01"}, {MerchantID: "JT01", InvoiceNo: "A-1"},
		{MerchantID: "JT01", InvoiceNo: "A1", Locale: "e n"}} {
		_, err := q.Body(tc2pSecret)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest, "%+v", q)
	}
}
