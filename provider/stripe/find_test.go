package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchQueryEscapes(t *testing.T) {
	assert.Equal(t, `metadata['idempay_intent']:'order-1'`, stripe.SearchQuery("order-1"))
	assert.Equal(t, `metadata['idempay_intent']:'o\' OR created>0 OR status:\'x'`, stripe.SearchQuery(`o' OR created>0 OR status:'x`))
	assert.Equal(t, `metadata['idempay_intent']:'back\\slash\''`, stripe.SearchQuery(`back\slash'`))
}

// An intent ID that tries to break out of the query finds only its own
// PaymentIntent, never another intent's.
func TestFindChargeByTrickyIntentID(t *testing.T) {
	srv, c, _ := setup(t, nil)
	for _, id := range []string{`plain`, `quote'd`, `o' OR metadata['idempay_intent']:'plain`, `back\slash`} {
		_, err := c.Charge(context.Background(), order(id, "pm_card_visa"))
		require.NoError(t, err, id)
	}
	hc := &http.Client{}
	for _, id := range []string{`quote'd`, `o' OR metadata['idempay_intent']:'plain`, `back\slash`} {
		v, err := stripe.Provider{}.FindCharge(context.Background(), hc, fakeTarget(t, srv), idempay.Record{Namespace: ns, ID: id})
		require.NoError(t, err, id)
		require.Equal(t, idempay.KindSucceeded, v.Kind, id)
		pi, _ := srv.PaymentIntent(v.Charge.ID)
		assert.Equal(t, id, pi.Metadata["idempay_intent"])
	}
}

func fakeTarget(t *testing.T, srv *stripetest.Server) idempay.Target {
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}
}

func TestFindChargeErrors(t *testing.T) {
	srv, _, _ := setup(t, nil)
	tg := fakeTarget(t, srv)
	hc := &http.Client{}
	p := stripe.Provider{}

	_, err := p.FindCharge(context.Background(), hc, tg, idempay.Record{Namespace: ns, ID: "none"})
	assert.ErrorIs(t, err, stripe.ErrNotIndexed, "an empty search is not proof")

	v, err := p.FindCharge(context.Background(), hc, tg, idempay.Record{Namespace: ns, ID: "x", ProviderRef: "pi_missing"})
	assert.Error(t, err)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)

	bad := tg
	bad.Credentials = "sk_wrong"
	_, err = p.FindCharge(context.Background(), hc, bad, idempay.Record{Namespace: ns, ID: "x"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.Status)
}

func TestFindChargeRefusesForeignReference(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ch, err := c.Charge(context.Background(), order("mine", "pm_card_visa"))
	require.NoError(t, err)
	_, err = stripe.Provider{}.FindCharge(context.Background(), &http.Client{}, fakeTarget(t, srv),
		idempay.Record{Namespace: ns, ID: "other", ProviderRef: ch.ID})
	assert.ErrorIs(t, err, stripe.ErrForeignIntent)
}

// Two PaymentIntents tagged with one intent (made outside idempay) are
// reported, not silently settled by one of them.
func TestFindChargeAmbiguous(t *testing.T) {
	tg := fakeTarget(t, stripetest.NewServer(stripetest.WithAPIKey(secret)))
	for range 2 {
		form := url.Values{"amount": {"100"}, "currency": {"usd"}, "metadata[idempay_intent]": {"dup"},
			"metadata[idempay_namespace]": {ns}, "payment_method": {"pm_card_visa"}, "confirm": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"}}
		r, _ := http.NewRequest(http.MethodPost, tg.BaseURL.String()+"/v1/payment_intents", stringsReader(form.Encode()))
		r.Header.Set("Authorization", "Bearer "+secret)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	}
	_, err := stripe.Provider{}.FindCharge(context.Background(), &http.Client{}, tg, idempay.Record{Namespace: ns, ID: "dup"})
	assert.ErrorIs(t, err, stripe.ErrAmbiguous)
}

// A PaymentIntent without the tag was not made by idempay for the intent:
// a reference to it settles nothing.
func TestFindChargeRefusesUntaggedReference(t *testing.T) {
	tg := fakeTarget(t, stripetest.NewServer(stripetest.WithAPIKey(secret)))
	form := url.Values{"amount": {"100"}, "currency": {"usd"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"}}
	r, _ := http.NewRequest(http.MethodPost, tg.BaseURL.String()+"/v1/payment_intents", stringsReader(form.Encode()))
	r.Header.Set("Authorization", "Bearer "+secret)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	var pi struct{ ID, Status string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&pi))
	resp.Body.Close()
	require.Equal(t, "succeeded", pi.Status)
	v, err := stripe.Provider{}.FindCharge(context.Background(), &http.Client{}, tg,
		idempay.Record{Namespace: ns, ID: "mine", ProviderRef: pi.ID})
	assert.ErrorIs(t, err, stripe.ErrForeignIntent)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}
