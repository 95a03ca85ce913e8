package idempay_test

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule (issue 17, 8): a namespace names one account of one provider. An
// account that could make another's namespace (its refunds', its ledgers')
// is refused by New.
func TestAccountThatCouldShareANamespaceIsRefused(t *testing.T) {
	for _, account := range []string{"acme/refund", "acme/ledger", "/", "a/b"} {
		_, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: memstore.New(), Account: account})
		var ce *idempay.ConfigError
		require.True(t, errors.As(err, &ce), "account %q: %v", account, err)
		assert.Equal(t, "Account", ce.Field)
		assert.ErrorIs(t, err, idempay.ErrConfig)
	}
	c, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: memstore.New(), Account: "acct_1:eu"})
	require.NoError(t, err)
	assert.Equal(t, "ownapi:acct_1:eu", c.Namespace())
}

// namedProvider is the own API under another name.
type namedProvider struct {
	idempay.OwnAPI
	name string
}

func (p namedProvider) Name() string { return p.name }

// Rule (issue 17, 8): the provider's name is the namespace's first part;
// one that could be read as a provider and an account is refused too.
func TestProviderNameThatCouldShareANamespaceIsRefused(t *testing.T) {
	for _, name := range []string{"ownapi:acme", "own/api", ""} {
		_, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1:1", Store: memstore.New(),
			Provider: namedProvider{name: name}})
		var ce *idempay.ConfigError
		require.True(t, errors.As(err, &ce), "provider name %q: %v", name, err)
		assert.Equal(t, "Provider", ce.Field)
	}
}
