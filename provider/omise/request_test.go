package omise

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
	u, _ := url.Parse("https://api.omise.test")
	return idempay.Target{BaseURL: u, Credentials: "skey_test_1", Namespace: "omise:default"}
}

func TestNewChargeRequest(t *testing.T) {
	req := valid()
	req.Description, req.ReturnURL = "Order o1", "https://shop.example/back"
	req.Metadata = map[string]string{"shop": "bangkok"}
	req.Extra = map[string]string{"capture": "false"}
	r, err := Provider{}.NewChargeRequest(context.Background(), target(), req, "key-1")
	require.NoError(t, err)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "https://api.omise.test/charges", r.URL.String())
	user, pass, ok := r.BasicAuth()
	assert.True(t, ok)
	assert.Equal(t, "skey_test_1", user)
	assert.Empty(t, pass)
	assert.Equal(t, "2019-05-29", r.Header.Get("Omise-Version"))
	assert.Equal(t, "key-1", r.Header.Get("Idempotency-Key"))
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	require.NoError(t, err)
	assert.Equal(t, url.Values{
		"amount": {"150000"}, "currency": {"thb"}, "card": {"tokn_test_1"}, "description": {"Order o1"},
		"return_uri": {"https://shop.example/back"}, "capture": {"false"},
		"metadata[idempay_intent]": {"o1"}, "metadata[idempay_namespace]": {"omise:default"}, "metadata[idempay_key]": {"key-1"},
		"metadata[shop]": {"bangkok"},
	}, form)
}

func TestSourceKinds(t *testing.T) {
	for src, want := range map[string][2]string{
		"tokn_test_1": {"card", "tokn_test_1"},
		"card_test_1": {"card", "card_test_1"},
		"src_test_1":  {"source", "src_test_1"},
	} {
		req := valid()
		req.Source = idempay.Secret(src)
		f := chargeForm(idempay.Target{Namespace: "omise:default"}, req, "k")
		assert.Equal(t, want[1], f.Get(want[0]), src)
	}
	req := valid()
	req.Source, req.Customer = "", "cust_1"
	f := chargeForm(idempay.Target{Namespace: "omise:default"}, req, "k")
	assert.Empty(t, f.Get("card"))
	assert.Empty(t, f.Get("source"))
	assert.Equal(t, "cust_1", f.Get("customer"))
}

func TestVersionOverride(t *testing.T) {
	r, err := Provider{Version: "2017-11-02"}.NewChargeRequest(context.Background(), target(), valid(), "k")
	require.NoError(t, err)
	assert.Equal(t, "2017-11-02", r.Header.Get("Omise-Version"))
}
