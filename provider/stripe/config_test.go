package stripe_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mistakes that would fail on the first send are refused by New, with a
// *idempay.ConfigError naming the field, before anything is stored or
// sent; the configurations that work are not.
func TestNewRefusesStripeMisconfiguration(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, tc := range []struct {
		name, base, field string
		creds             idempay.Secret
		p                 stripe.Provider
	}{
		{"no credentials", srv.URL, "Credentials", "", stripe.Provider{}},
		{"blank credentials", srv.URL, "Credentials", "  ", stripe.Provider{}},
		{"a publishable key", srv.URL, "Credentials", "pk_test_123", stripe.Provider{}},
		{"base URL ending in /v1", srv.URL + "/v1", "BaseURL", secret, stripe.Provider{}},
		{"base URL ending in /v1/", srv.URL + "/v1/", "BaseURL", secret, stripe.Provider{}},
		{"base URL with the endpoint", srv.URL + "/v1/payment_intents", "BaseURL", secret, stripe.Provider{}},
		{"base URL with a query", srv.URL + "?x=1", "BaseURL", secret, stripe.Provider{}},
		{"API version with a space", srv.URL, "Provider.APIVersion", secret, stripe.Provider{APIVersion: "2024 06"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idempay.New(idempay.Config{BaseURL: tc.base, Credentials: tc.creds, Provider: tc.p, Store: memstore.New()})
			require.ErrorIs(t, err, idempay.ErrConfig)
			var ce *idempay.ConfigError
			require.True(t, errors.As(err, &ce), "%T", err)
			assert.Equal(t, tc.field, ce.Field)
			assert.NotContains(t, err.Error(), string(tc.creds)+"x", "no secret in the error")
		})
	}
	assert.Zero(t, hits.Load(), "nothing sent")
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/stripe-proxy"} {
		_, err := idempay.New(idempay.Config{BaseURL: base, Credentials: secret, Provider: stripe.Provider{}, Store: memstore.New()})
		assert.NoError(t, err, base)
	}
	_, err := idempay.New(idempay.Config{BaseURL: srv.URL, Credentials: "rk_test_restricted", Provider: stripe.Provider{}, Store: memstore.New()})
	assert.NoError(t, err, "a restricted key")
}
