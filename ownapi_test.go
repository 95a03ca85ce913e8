package idempay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownAPIBody is the JSON the default OwnAPI contract sends for req.
func ownAPIBody(t *testing.T, req idempay.ChargeRequest) map[string]any {
	t.Helper()
	require.NoError(t, idempay.OwnAPI{}.Validate(req))
	u, _ := url.Parse("https://payments.example")
	r, err := idempay.OwnAPI{}.NewChargeRequest(context.Background(), idempay.Target{BaseURL: u}, req, "k1")
	require.NoError(t, err)
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(b, &body))
	return body
}

// TestOwnAPIDefaultBodyCarriesAmountCurrencyMetadata: the default contract
// sends the amount in minor units with its currency and the metadata, for
// any currency; amount_jpy stays for JPY, the article's field.
func TestOwnAPIDefaultBodyCarriesAmountCurrencyMetadata(t *testing.T) {
	usd := ownAPIBody(t, idempay.ChargeRequest{IntentID: "o1", Amount: 1999, Currency: "usd", Source: "tokn_1",
		Metadata: map[string]string{"cart": "c9"}})
	assert.Equal(t, map[string]any{"order_id": "o1", "amount": 1999.0, "currency": "USD", "omise_token": "tokn_1",
		"metadata": map[string]any{"cart": "c9"}}, usd)

	jpy := ownAPIBody(t, idempay.ChargeRequest{IntentID: "o2", Amount: 1500, Currency: "JPY", Source: "tokn_2"})
	assert.Equal(t, map[string]any{"order_id": "o2", "amount": 1500.0, "currency": "JPY", "amount_jpy": 1500.0,
		"omise_token": "tokn_2"}, jpy)
}

// TestOwnAPIDefaultRefusesWhatItCannotSend: a field the default contract
// has no place for is refused before anything is stored or sent, never
// dropped in silence.
func TestOwnAPIDefaultRefusesWhatItCannotSend(t *testing.T) {
	base := idempay.ChargeRequest{IntentID: "o1", Amount: 1500, Currency: "JPY", Source: "tokn_1"}
	for field, mod := range map[string]func(*idempay.ChargeRequest){
		"Description": func(r *idempay.ChargeRequest) { r.Description = "order 1" },
		"Customer":    func(r *idempay.ChargeRequest) { r.Customer = "cust_1" },
		"ReturnURL":   func(r *idempay.ChargeRequest) { r.ReturnURL = "https://shop.example/back" },
		"Extra":       func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"statement_descriptor": "x"} },
		"Source":      func(r *idempay.ChargeRequest) { r.Source = "" },
	} {
		req := base
		mod(&req)
		err := idempay.OwnAPI{}.Validate(req)
		var ve *idempay.ValidationError
		if assert.True(t, errors.As(err, &ve), "%s: got %v", field, err) {
			assert.Equal(t, field, ve.Field)
		}
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest, field)
	}
	// The one Extra the default body carries is capture, true or false.
	for v, ok := range map[string]bool{"false": true, "true": true, "later": false} {
		req := base
		req.Extra = map[string]string{"capture": v}
		err := idempay.OwnAPI{}.Validate(req)
		assert.Equal(t, ok, err == nil, "capture %q: %v", v, err)
	}
	req := base
	req.Extra = map[string]string{"capture": "false", "statement_descriptor": "x"}
	assert.Error(t, idempay.OwnAPI{}.Validate(req), "capture and something it cannot carry")
	// With its own Encode, a caller decides what is sent.
	req = base
	req.Description = "order 1"
	assert.NoError(t, idempay.OwnAPI{Encode: func(idempay.ChargeRequest) ([]byte, string, error) {
		return []byte(`{}`), "application/json", nil
	}}.Validate(req))
}
