package omise_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mistakes that would fail on the first send are refused by New, with a
// *idempay.ConfigError naming the field, before anything is stored or
// sent.
func TestNewRefusesOmiseMisconfiguration(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, tc := range []struct {
		name, base, field string
		creds             idempay.Secret
	}{
		{"no credentials", srv.URL, "Credentials", ""},
		{"padded credentials", srv.URL, "Credentials", secret + "\n"},
		{"the public key", srv.URL, "Credentials", "pkey_test_123"},
		{"base URL with /charges", srv.URL + "/charges", "BaseURL", secret},
		{"base URL with a fragment", srv.URL + "#x", "BaseURL", secret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idempay.New(idempay.Config{BaseURL: tc.base, Credentials: tc.creds, Provider: omise.Provider{}, Store: memstore.New()})
			require.ErrorIs(t, err, idempay.ErrConfig)
			var ce *idempay.ConfigError
			require.True(t, errors.As(err, &ce), "%T", err)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
	assert.Zero(t, hits.Load(), "nothing sent")
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/omise-proxy"} {
		_, err := idempay.New(idempay.Config{BaseURL: base, Credentials: secret, Provider: omise.Provider{}, Store: memstore.New()})
		assert.NoError(t, err, base)
	}
}
