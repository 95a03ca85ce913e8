package stripe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func valid() idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: "o1", Amount: 1500, Currency: "JPY", Source: "pm_card_visa"}
}

func TestValidate(t *testing.T) {
	manyKeys := map[string]string{}
	for i := range MaxMetadataKeys - len(reservedKeys) {
		manyKeys[fmt.Sprintf("k%02d", i)] = "v"
	}
	tooMany := map[string]string{"extra": "v"}
	for k, v := range manyKeys {
		tooMany[k] = v
	}
	cases := []struct {
		name  string
		mod   func(*idempay.ChargeRequest)
		field string // the field the adapter refuses; empty: valid
		core  string // the field the core (ChargeRequest.Validate) refuses first; empty: the core accepts it
		gap   string // why the core should accept what it refuses: a known gap, skipped until it is closed
	}{
		{"minimal", func(*idempay.ChargeRequest) {}, "", "", ""},
		{"no source: unconfirmed intent", func(r *idempay.ChargeRequest) { r.Source = "" }, "", "", ""},
		{"amount at Stripe's maximum", func(r *idempay.ChargeRequest) { r.Amount = MaxAmount }, "", "", ""},
		{"amount above Stripe's maximum", func(r *idempay.ChargeRequest) { r.Amount = MaxAmount + 1 }, "Amount", "", ""},
		{"ISK scaled past the maximum", func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "ISK", 1_000_000 }, "Amount", "", ""},
		{"ISK within", func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "ISK", 999_999 }, "", "", ""},
		{"three-decimal ending in 0", func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "KWD", 5120 }, "", "", ""},
		{"three-decimal not ending in 0", func(r *idempay.ChargeRequest) { r.Currency, r.Amount = "KWD", 5124 }, "Amount", "", ""},
		{"ISO and Stripe disagree (IQD)", func(r *idempay.ChargeRequest) { r.Currency = "IQD" }, "Currency", "", ""},
		{"46 caller metadata keys", func(r *idempay.ChargeRequest) { r.Metadata = manyKeys }, "", "", ""},
		{"47 caller metadata keys", func(r *idempay.ChargeRequest) { r.Metadata = tooMany }, "Metadata", "", ""},
		{"reserved metadata key", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_intent": "x"} }, "Metadata", "Metadata", ""},
		{"reserved namespace key", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_namespace": "x"} }, "Metadata", "Metadata", ""},
		{"reserved confirm key", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_confirm": "x"} }, "Metadata", "Metadata", ""},
		{"reserved key key", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_key": "x"} }, "Metadata", "Metadata", ""},
		{"metadata key of 40", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{strings.Repeat("k", 40): "v"} }, "", "", ""},
		{"metadata key of 41", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{strings.Repeat("k", 41): "v"} }, "Metadata", "", ""},
		{"metadata value of 500 runes", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"k": strings.Repeat("é", 500)} }, "", "", ""},
		{"metadata value of 501", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"k": strings.Repeat("v", 501)} }, "Metadata", "", ""},
		{"metadata key with brackets", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"a[b]": "v"} }, "Metadata", "", ""},
		{"return URL", func(r *idempay.ChargeRequest) { r.ReturnURL = "https://shop.example/back" }, "", "", ""},
		{"app return URL", func(r *idempay.ChargeRequest) { r.ReturnURL = "myapp://paid" }, "", "", ""},
		{"relative return URL", func(r *idempay.ChargeRequest) { r.ReturnURL = "/back" }, "ReturnURL", "ReturnURL", ""},
		{"return URL without source", func(r *idempay.ChargeRequest) { r.Source, r.ReturnURL = "", "https://x" }, "ReturnURL", "", ""},
		{"capture_method manual", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"capture_method": "manual"} }, "", "", ""},
		{"capture_method bogus", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"capture_method": "later"} }, "Extra", "", ""},
		{"setup_future_usage", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"setup_future_usage": "off_session"} }, "", "", ""},
		{"off_session without source", func(r *idempay.ChargeRequest) {
			r.Source, r.Extra = "", map[string]string{"off_session": "true"}
		}, "Extra", "", ""},
		{"nested pass-through", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"payment_method_types[0]": "card"} }, "", "", ""},
		{"extra overriding amount", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"amount": "1"} }, "Extra", "", ""},
		{"extra overriding metadata", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"metadata[idempay_intent]": "x"} }, "Extra", "", ""},
		{"extra not a form name", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"Capture Method": "manual"} }, "Extra", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := valid()
			tc.mod(&req)
			// The adapter's own check, which also guards callers that
			// use it without the Client.
			err := Provider{}.Validate(req)
			if tc.field == "" {
				assert.NoError(t, err)
			} else {
				var ve *idempay.ValidationError
				require.True(t, errors.As(err, &ve), "want a *ValidationError, got %v", err)
				assert.Equal(t, tc.field, ve.Field, ve.Reason)
				assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
			}
			coreErr := req.Validate()
			if tc.core != "" {
				// Refused by the core first, for a reason of its own (a
				// reserved prefix, a URL that is not absolute).
				var ve *idempay.ValidationError
				require.ErrorAs(t, coreErr, &ve)
				assert.Equal(t, tc.core, ve.Field, ve.Reason)
				return
			}
			if coreErr != nil && tc.gap != "" {
				t.Skipf("core gap: %s: %v", tc.gap, coreErr)
			}
			require.NoError(t, coreErr, "the core accepts it; the adapter decides")
		})
	}
}

func TestValidateAPIVersion(t *testing.T) {
	assert.NoError(t, Provider{APIVersion: "2025-03-31.basil"}.Validate(valid()))
	assert.ErrorIs(t, Provider{APIVersion: "2024-06-20\r\nX-Evil: 1"}.Validate(valid()), idempay.ErrInvalidRequest)
}

func TestExponent(t *testing.T) {
	for code, want := range map[string]int{"jpy": 0, "KRW": 0, "XPF": 0, "USD": 2, "ISK": 2, "HUF": 2, "KWD": 3, "tnd": 3} {
		assert.Equal(t, want, Exponent(code), code)
	}
	// Every zero-decimal currency of Stripe's list has no minor unit in
	// ISO 4217 either, except MGA, which ISO counts in hundredths: it is
	// converted, and only whole ariary can be sent.
	for code := range zeroDecimal {
		iso, err := idempay.CurrencyExponent(code)
		require.NoError(t, err)
		if code == "MGA" {
			assert.Equal(t, 2, iso)
			continue
		}
		assert.Zero(t, iso, code)
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		code        string
		iso, stripe int64
	}{{"JPY", 1500, 1500}, {"USD", 1999, 1999}, {"ISK", 1500, 150000}, {"MGA", 150000, 1500}, {"KWD", 5120, 5120}, {"IDR", 1000000, 1000000}} {
		got, err := toStripe(tc.code, tc.iso)
		require.NoError(t, err, tc.code)
		assert.Equal(t, tc.stripe, got, tc.code)
		assert.Equal(t, tc.iso, fromStripe(tc.code, got), tc.code)
	}
	_, err := toStripe("MGA", 150050)
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Amount", ve.Field)
	_, err = toStripe("CLF", 10000) // ISO 4, Stripe 2: undocumented
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Currency", ve.Field)
}
