package omise

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func valid() idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: "o1", Amount: 150000, Currency: "THB", Source: "tokn_test_1"}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		p     Provider
		mod   func(*idempay.ChargeRequest)
		field string // the field the adapter refuses; empty: valid
		core  string // the field the core (ChargeRequest.Validate) refuses first; empty: the core accepts it
	}{
		{"token", Provider{}, func(*idempay.ChargeRequest) {}, "", ""},
		{"JPY in yen", Provider{}, func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "jpy", 1500 }, "", ""},
		{"USD", Provider{}, func(r *idempay.ChargeRequest) { r.Currency = "USD" }, "", ""},
		{"KRW has no minor unit in ISO but two at Omise", Provider{}, func(r *idempay.ChargeRequest) { r.Currency = "KRW" }, "Currency", ""},
		{"three-decimal", Provider{}, func(r *idempay.ChargeRequest) { r.Currency = "KWD" }, "Currency", ""},
		{"source", Provider{}, func(r *idempay.ChargeRequest) { r.Source = "src_test_1" }, "", ""},
		{"token with customer", Provider{}, func(r *idempay.ChargeRequest) { r.Customer = "cust_1" }, "Customer", ""},
		{"saved card refused", Provider{}, func(r *idempay.ChargeRequest) { r.Source, r.Customer = "card_1", "cust_1" }, "Source", ""},
		{"default card refused", Provider{}, func(r *idempay.ChargeRequest) { r.Source, r.Customer = "", "cust_1" }, "Source", ""},
		{"saved card allowed", Provider{SavedCards: true}, func(r *idempay.ChargeRequest) { r.Source, r.Customer = "card_1", "cust_1" }, "", ""},
		{"default card allowed", Provider{SavedCards: true}, func(r *idempay.ChargeRequest) { r.Source, r.Customer = "", "cust_1" }, "", ""},
		{"saved card without customer", Provider{SavedCards: true}, func(r *idempay.ChargeRequest) { r.Source = "card_1" }, "Customer", ""},
		{"nothing to charge", Provider{}, func(r *idempay.ChargeRequest) { r.Source = "" }, "Source", ""},
		{"unknown prefix", Provider{}, func(r *idempay.ChargeRequest) { r.Source = "pm_card_visa" }, "Source", ""},
		{"return URI", Provider{}, func(r *idempay.ChargeRequest) { r.ReturnURL = "https://shop.example/back" }, "", ""},
		{"relative return URI", Provider{}, func(r *idempay.ChargeRequest) { r.ReturnURL = "/back" }, "ReturnURL", "ReturnURL"},
		{"reserved metadata", Provider{}, func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_intent": "x"} }, "Metadata", "Metadata"},
		{"bracketed metadata", Provider{}, func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"a[b]": "x"} }, "Metadata", ""},
		{"capture false", Provider{}, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"capture": "false"} }, "", ""},
		{"capture bogus", Provider{}, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"capture": "later"} }, "Extra", ""},
		{"extra overriding card", Provider{}, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"card": "tokn_x"} }, "Extra", ""},
		{"extra overriding metadata", Provider{}, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"metadata[x]": "1"} }, "Extra", ""},
		{"extra ip", Provider{}, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{ExtraIP: "203.0.113.7"} }, "", ""},
		{"bad version", Provider{Version: "2019 05 29"}, func(*idempay.ChargeRequest) {}, "Provider.Version", ""},
		{"negative skew", Provider{ClockSkew: -1}, func(*idempay.ChargeRequest) {}, "Provider", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := valid()
			tc.mod(&req)
			// The adapter's own check, which also guards callers that
			// use it without the Client.
			err := tc.p.Validate(req)
			if tc.field == "" {
				assert.NoError(t, err)
			} else {
				var ve *idempay.ValidationError
				require.True(t, errors.As(err, &ve), "want a *ValidationError, got %v", err)
				assert.Equal(t, tc.field, ve.Field, ve.Reason)
			}
			coreErr := req.Validate()
			if tc.core == "" {
				require.NoError(t, coreErr, "the core accepts it; the adapter decides")
				return
			}
			// Refused by the core first, for a reason of its own (a
			// reserved prefix, a URL that is not absolute).
			var ve *idempay.ValidationError
			require.ErrorAs(t, coreErr, &ve)
			assert.Equal(t, tc.core, ve.Field, ve.Reason)
		})
	}
}
