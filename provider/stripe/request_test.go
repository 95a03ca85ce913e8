package stripe

import (
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func target() idempay.Target {
	u, _ := url.Parse("https://api.stripe.test")
	return idempay.Target{BaseURL: u, Credentials: "sk_test_1"}
}

func TestNewChargeRequest(t *testing.T) {
	req := valid()
	req.Customer, req.Description = "cus_1", "Order o1"
	req.Metadata = map[string]string{"shop": "tokyo"}
	req.Extra = map[string]string{"capture_method": "manual"}
	r, err := Provider{APIVersion: "2024-06-20"}.NewChargeRequest(context.Background(), target(), req, "key-1")
	require.NoError(t, err)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "https://api.stripe.test/v1/payment_intents", r.URL.String())
	assert.Equal(t, "Bearer sk_test_1", r.Header.Get("Authorization"))
	assert.Equal(t, "2024-06-20", r.Header.Get("Stripe-Version"))
	assert.Equal(t, "key-1", r.Header.Get("Idempotency-Key"))
	assert.Equal(t, "application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	require.NoError(t, err)
	assert.Equal(t, url.Values{
		"amount": {"1500"}, "currency": {"jpy"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"},
		"customer": {"cus_1"}, "description": {"Order o1"}, "capture_method": {"manual"},
		"metadata[idempay_intent]": {"o1"}, "metadata[idempay_key]": {"key-1"},
		"metadata[idempay_confirm]": {"true"}, "metadata[shop]": {"tokyo"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"},
	}, form)
}

func TestFormShapes(t *testing.T) {
	t.Run("no source: not confirmed", func(t *testing.T) {
		req := valid()
		req.Source = ""
		f, err := chargeForm(target(), req, "k")
		require.NoError(t, err)
		assert.Empty(t, f.Get("confirm"))
		assert.Empty(t, f.Get("payment_method"))
		assert.Empty(t, f.Get("automatic_payment_methods[enabled]"))
	})
	t.Run("return URL allows redirects", func(t *testing.T) {
		req := valid()
		req.ReturnURL = "https://shop.example/back"
		f, err := chargeForm(target(), req, "k")
		require.NoError(t, err)
		assert.Equal(t, "https://shop.example/back", f.Get("return_url"))
		assert.Empty(t, f.Get("automatic_payment_methods[allow_redirects]"))
	})
	t.Run("caller's method types win", func(t *testing.T) {
		req := valid()
		req.Extra = map[string]string{"payment_method_types[0]": "card"}
		f, err := chargeForm(target(), req, "k")
		require.NoError(t, err)
		assert.Equal(t, "card", f.Get("payment_method_types[0]"))
		assert.Empty(t, f.Get("automatic_payment_methods[enabled]"))
	})
	t.Run("ISK in hundredths", func(t *testing.T) {
		req := valid()
		req.Currency, req.Amount = "ISK", 1500
		f, err := chargeForm(target(), req, "k")
		require.NoError(t, err)
		assert.Equal(t, "150000", f.Get("amount"))
		assert.Equal(t, "isk", f.Get("currency"))
	})
}

// The body is the same bytes on every build: Stripe compares the
// parameters of every request under one key.
func TestBodyIsStable(t *testing.T) {
	req := valid()
	req.Metadata = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}
	var first string
	for i := range 20 {
		r, err := Provider{}.NewChargeRequest(context.Background(), target(), req, "k")
		require.NoError(t, err)
		b, _ := io.ReadAll(r.Body)
		if i == 0 {
			first = string(b)
		}
		require.Equal(t, first, string(b))
	}
}

func TestNoSecretsInHeadersWithoutCredentials(t *testing.T) {
	tg := target()
	tg.Credentials = ""
	r, err := Provider{}.NewChargeRequest(context.Background(), tg, valid(), "k")
	require.NoError(t, err)
	assert.Empty(t, r.Header.Get("Authorization"))
	assert.Empty(t, r.Header.Get("Stripe-Version"))
}
