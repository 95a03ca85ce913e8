package omise_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two idempay accounts (namespaces) on one Omise key, with the same intent
// ID: a lookup for one never settles it with the other's charge.
func TestTwoAccountsOnOneKeyNeverSettleEachOther(t *testing.T) {
	f := setup(t, nil, func(cfg *idempay.Config) { cfg.Account = "shop-a" })
	ctx := context.Background()
	ch, err := f.client.Charge(ctx, thb("order-1", "tokn_test_a"))
	require.NoError(t, err)
	c, ok := f.srv.Charge(ch.ID)
	require.True(t, ok)
	assert.Equal(t, "omise:shop-a", c.Metadata[omise.NamespaceMetadataKey], "charges carry their namespace")

	shopB := idempay.Record{Namespace: "omise:shop-b", ID: "order-1", CreatedAt: time.Now()}
	v, err := omise.Provider{}.FindCharge(ctx, nil, f.target, shopB)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind, "shop-a's charge is not shop-b's")

	shopB.ProviderRef = ch.ID
	_, err = omise.Provider{}.FindCharge(ctx, nil, f.target, shopB)
	assert.ErrorIs(t, err, omise.ErrForeignCharge, "not even when shop-b's record names it")

	shopA := idempay.Record{Namespace: "omise:shop-a", ID: "order-1", CreatedAt: time.Now()}
	v, err = omise.Provider{}.FindCharge(ctx, nil, f.target, shopA)
	require.NoError(t, err)
	assert.Equal(t, ch.ID, v.Charge.ID)

	b := f.target
	b.Namespace = "omise:shop-b"
	_, err = omise.Provider{}.IntentOfCharge(ctx, nil, b, ch.ID)
	assert.ErrorIs(t, err, omise.ErrForeignCharge)
}

// A charge tagged with the intent alone (as idempay tagged charges before
// namespaces) is taken as the record's only where it cannot be another
// account's: when the record names it, or when Provider.LegacyNamespace
// says this namespace is the only one that used the key. Found by listing
// otherwise, it settles nothing and proves nothing.
func TestLegacyTagAcceptedOnlyWhereItCannotBeAnotherAccounts(t *testing.T) {
	f := setup(t, nil)
	ctx := context.Background()
	legacy := postCharge(t, f.target, url.Values{"amount": {"150000"}, "currency": {"thb"}, "card": {"tokn_test_old"},
		"metadata[idempay_intent]": {"order-1"}})
	rec := idempay.Record{Namespace: ns, ID: "order-1", CreatedAt: time.Now()}

	v, err := omise.Provider{}.FindCharge(ctx, nil, f.target, rec)
	assert.ErrorIs(t, err, omise.ErrLegacyTag)
	assert.Equal(t, idempay.KindUnknown, v.Kind, "neither found nor proof of absence")

	v, err = omise.Provider{LegacyNamespace: "omise:other"}.FindCharge(ctx, nil, f.target, rec)
	assert.ErrorIs(t, err, omise.ErrLegacyTag)
	assert.Equal(t, idempay.KindUnknown, v.Kind)

	v, err = omise.Provider{LegacyNamespace: ns}.FindCharge(ctx, nil, f.target, rec)
	require.NoError(t, err)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, legacy.ID, v.Charge.ID)

	rec.ProviderRef = legacy.ID
	v, err = omise.Provider{}.FindCharge(ctx, nil, f.target, rec)
	require.NoError(t, err, "the record's own reference")
	assert.Equal(t, idempay.KindSucceeded, v.Kind)
}
