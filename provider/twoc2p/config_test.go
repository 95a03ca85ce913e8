package twoc2p_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mistakes that would fail on the first send are refused by New, with a
// *idempay.ConfigError naming the field, before anything is stored or
// sent.
func TestNewRefusesTwoC2PMisconfiguration(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	ok := twoc2p.Provider{MerchantID: tc2pMerchant}
	for _, tc := range []struct {
		name, base, field string
		creds             idempay.Secret
		p                 twoc2p.Provider
	}{
		{"no secret key", srv.URL, "Credentials", "", ok},
		{"no merchant ID", srv.URL, "Provider.MerchantID", tc2pSecret, twoc2p.Provider{}},
		{"base URL with /payment/4.3", srv.URL + "/payment/4.3", "BaseURL", tc2pSecret, ok},
		{"base URL with the token path", srv.URL + "/payment/4.3/paymentToken", "BaseURL", tc2pSecret, ok},
		{"base URL with a query", srv.URL + "?a=b", "BaseURL", tc2pSecret, ok},
		{"a maintenance URL without a host", srv.URL, "Provider.MaintenanceURL", tc2pSecret,
			twoc2p.Provider{MerchantID: tc2pMerchant, MaintenanceURL: "/PaymentAction/2.0/action"}},
		{"manual settlement without the keys", srv.URL, "Provider.Maintenance", tc2pSecret,
			twoc2p.Provider{MerchantID: tc2pMerchant, ManualSettlement: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idempay.New(idempay.Config{BaseURL: tc.base, Credentials: tc.creds, Provider: tc.p, Store: memstore.New()})
			require.ErrorIs(t, err, idempay.ErrConfig)
			var ce *idempay.ConfigError
			require.True(t, errors.As(err, &ce), "%T", err)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
	assert.Zero(t, hits.Load(), "nothing sent")
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/pgw"} {
		_, err := idempay.New(idempay.Config{BaseURL: base, Credentials: tc2pSecret, Provider: ok, Store: memstore.New()})
		assert.NoError(t, err, base)
	}
}
