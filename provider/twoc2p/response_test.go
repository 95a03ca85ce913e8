package twoc2p_test

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTwoC2PParseResponse(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pSecret}
	signed := twoc2ptest.Body(tc2pHS256(`{"webPaymentUrl":"https://pay.example/t","paymentToken":"tok","respCode":"0000","respDesc":"Success"}`))
	r, err := twoc2p.ParseResponse(s, signed)
	require.NoError(t, err)
	assert.True(t, r.Signed)
	assert.Equal(t, "0000", r.RespCode)
	assert.Equal(t, "tok", r.PaymentToken)
	assert.Equal(t, "https://pay.example/t", r.WebPaymentURL)

	r, err = twoc2p.ParseResponse(s, twoc2ptest.Body(tc2pHS256(`{"invoiceNo":"A1","amount":1234.50,"currencyCode":"THB","respCode":"0000"}`)))
	require.NoError(t, err)
	assert.Equal(t, "1234.50", r.Amount, "a number amount keeps its text")
	r, err = twoc2p.ParseResponse(s, twoc2ptest.Body(tc2pHS256(`{"amount":"1234.50","respCode":"0001"}`)))
	require.NoError(t, err)
	assert.Equal(t, "1234.50", r.Amount, "a string amount too")

	// The plain error form.
	r, err = twoc2p.ParseResponse(s, []byte(` {"respCode":"9015","respDesc":"Existing Invoice Number"} `))
	require.NoError(t, err)
	assert.False(t, r.Signed)
	assert.Equal(t, "9015", r.RespCode)

	refused := []struct {
		name, body string
		is         error
	}{
		{"unsigned success", `{"respCode":"0000","respDesc":"Success","paymentToken":"tok"}`, twoc2p.ErrUnsigned},
		{"unsigned pending", `{"respCode":"0001"}`, twoc2p.ErrUnsigned},
		{"unsigned in progress", `{"respCode":"2001"}`, twoc2p.ErrUnsigned},
		{"unsigned tokenised", `{"respCode":"4200"}`, twoc2p.ErrUnsigned},
		{"unsigned, claiming Signed", `{"respCode":"0000","Signed":true}`, twoc2p.ErrUnsigned},
		{"bad payload beside a plain code", `{"payload":"x.y.z","respCode":"9004"}`, idempay.ErrTwoC2PSignature},
		{"payload not a string", `{"payload":1}`, twoc2p.ErrMalformed},
		{"neither form", `{"status":"ok"}`, twoc2p.ErrMalformed},
		{"not JSON", `<html>502</html>`, twoc2p.ErrMalformed},
		{"array", `[{"respCode":"9004"}]`, twoc2p.ErrMalformed},
		{"null", `null`, twoc2p.ErrMalformed},
		{"respCode a number", `{"respCode":9004}`, twoc2p.ErrMalformed},
		{"signed claims not an object", string(twoc2ptest.Body(tc2pHS256(`["0000"]`))), idempay.ErrTwoC2PSignature},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := twoc2p.ParseResponse(s, []byte(tc.body))
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.is), "%v is not %v", err, tc.is)
		})
	}
}
