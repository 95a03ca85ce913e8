package idempay_test

import (
	"errors"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkingProvider refuses every target with err.
type checkingProvider struct {
	idempay.OwnAPI
	err error
}

func (p checkingProvider) CheckConfig(idempay.Target) error { return p.err }

// New asks a ConfigChecker before it returns: its *ConfigError comes back
// as it is, any other error wrapped in one (Field "Provider"), both
// matching ErrConfig.
func TestNewAsksTheProvidersConfigChecker(t *testing.T) {
	cfg := idempay.Config{BaseURL: "https://payments.example", Store: memstore.New()}

	cfg.Provider = checkingProvider{err: &idempay.ConfigError{Field: "Credentials", Reason: "is empty"}}
	_, err := idempay.New(cfg)
	var ce *idempay.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "Credentials", ce.Field)

	cfg.Provider = checkingProvider{err: errors.New("no merchant ID")}
	_, err = idempay.New(cfg)
	require.ErrorIs(t, err, idempay.ErrConfig)
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "Provider", ce.Field)
	assert.Contains(t, ce.Reason, "no merchant ID")

	cfg.Provider = checkingProvider{}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	require.NotNil(t, c)
}
