package stripe_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createByHand makes a PaymentIntent at the fake with the given metadata,
// as another integration (or an older idempay) would.
func createByHand(t *testing.T, tg idempay.Target, metadata map[string]string) string {
	t.Helper()
	form := url.Values{"amount": {"1500"}, "currency": {"jpy"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"}}
	for k, v := range metadata {
		form.Set("metadata["+k+"]", v)
	}
	r, _ := http.NewRequest(http.MethodPost, tg.BaseURL.String()+"/v1/payment_intents", stringsReader(form.Encode()))
	r.Header.Set("Authorization", "Bearer "+secret)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var pi struct{ ID string }
	require.NoError(t, jsonDecode(resp, &pi))
	return pi.ID
}

// Two idempay accounts on one Stripe key with the same intent ID: search
// for one never settles it with the other's PaymentIntent.
func TestTwoAccountsOnOneKeyNeverSettleEachOther(t *testing.T) {
	srv, c, _ := setup(t, nil, func(cfg *idempay.Config) { cfg.Account = "shop-a" })
	ctx := context.Background()
	ch, err := c.Charge(ctx, order("order-1", "pm_card_visa"))
	require.NoError(t, err)
	pi, _ := srv.PaymentIntent(ch.ID)
	assert.Equal(t, "stripe:shop-a", pi.Metadata[stripe.NamespaceMetadataKey])

	tg := fakeTarget(t, srv)
	shopB := idempay.Record{Namespace: "stripe:shop-b", ID: "order-1"}
	_, err = stripe.Provider{}.FindCharge(ctx, nil, tg, shopB)
	assert.ErrorIs(t, err, stripe.ErrNotIndexed, "shop-a's PaymentIntent is not shop-b's")
	shopB.ProviderRef = ch.ID
	_, err = stripe.Provider{}.FindCharge(ctx, nil, tg, shopB)
	assert.ErrorIs(t, err, stripe.ErrForeignIntent, "not even when shop-b's record names it")

	v, err := stripe.Provider{}.FindCharge(ctx, nil, tg, idempay.Record{Namespace: "stripe:shop-a", ID: "order-1"})
	require.NoError(t, err)
	assert.Equal(t, ch.ID, v.Charge.ID)
}

// A PaymentIntent tagged with the intent alone (as idempay tagged them
// before namespaces) is the record's only where it cannot be another
// account's: the record names it, or Provider.LegacyNamespace says this
// namespace is the only one that used the key.
func TestLegacyTagAcceptedOnlyWhereItCannotBeAnotherAccounts(t *testing.T) {
	srv, _, _ := setup(t, nil)
	tg := fakeTarget(t, srv)
	ctx := context.Background()
	legacy := createByHand(t, tg, map[string]string{stripe.IntentMetadataKey: "order-1"})
	rec := idempay.Record{Namespace: ns, ID: "order-1"}

	v, err := stripe.Provider{}.FindCharge(ctx, nil, tg, rec)
	assert.ErrorIs(t, err, stripe.ErrLegacyTag)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
	_, err = stripe.Provider{LegacyNamespace: "stripe:other"}.FindCharge(ctx, nil, tg, rec)
	assert.ErrorIs(t, err, stripe.ErrLegacyTag)

	v, err = stripe.Provider{LegacyNamespace: ns}.FindCharge(ctx, nil, tg, rec)
	require.NoError(t, err)
	assert.Equal(t, legacy, v.Charge.ID)

	rec.ProviderRef = legacy
	v, err = stripe.Provider{}.FindCharge(ctx, nil, tg, rec)
	require.NoError(t, err, "the record's own reference")
	assert.Equal(t, idempay.KindSucceeded, v.Kind)

	// A namespaced PaymentIntent of the record wins over a legacy one.
	own := createByHand(t, tg, map[string]string{stripe.IntentMetadataKey: "order-1", stripe.NamespaceMetadataKey: ns})
	rec.ProviderRef = ""
	v, err = stripe.Provider{}.FindCharge(ctx, nil, tg, rec)
	require.NoError(t, err)
	assert.Equal(t, own, v.Charge.ID)
}
