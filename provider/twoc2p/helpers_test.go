package twoc2p_test

import (
	"context"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/require"
)

// The merchant every 2C2P test speaks as. The secret is a test value.
const (
	tc2pSecret   idempay.Secret = "fake-2c2p-merchant-secret"
	tc2pMerchant                = "JT01"
	tc2pNS                      = "2c2p:default"
)

// tc2pFake is what a test asks of its fake gateway: options, and a hook
// of its own, called after tc2pServe's check.
type tc2pFake struct {
	opts []twoc2ptest.Option
	hook func(twoc2ptest.RequestInfo)
}

// tc2pServe starts a fake 2C2P gateway for the test's merchant. invoiceOf
// maps an invoiceNo back to the intent the test charged under it; when it
// is set, every verified request is checked against store: the intent must
// be reserved, with the idempotencyID of a token request as its key,
// before the request arrives. The test's own hook is kept.
func tc2pServe(t *testing.T, f tc2pFake, store idempay.KeyStore, intentOf func(invoiceNo string) string) (*twoc2ptest.Server, string) {
	t.Helper()
	hook := f.hook
	if store != nil && intentOf != nil {
		also := f.hook // the test's own, called after the check
		hook = func(info twoc2ptest.RequestInfo) {
			if also != nil {
				defer also(info)
			}
			if info.Endpoint == twoc2ptest.Maintenance {
				return
			}
			intent := intentOf(info.InvoiceNo)
			rec, err := store.Load(context.Background(), tc2pNS, intent)
			switch {
			case err != nil:
				t.Errorf("2C2P %s request for invoice %s (intent %q) arrived before the store held the intent: %v",
					info.Endpoint, info.InvoiceNo, intent, err)
			case info.Endpoint == twoc2ptest.Token && rec.Key != info.IdempotencyID:
				t.Errorf("token request for intent %q carries idempotencyID %q, store holds key %q",
					intent, info.IdempotencyID, rec.Key)
			}
		}
	}
	opts := append([]twoc2ptest.Option{twoc2ptest.WithMerchant(tc2pMerchant, tc2pSecret.Reveal())}, f.opts...)
	if hook != nil {
		opts = append(opts, twoc2ptest.WithHook(hook))
	}
	srv := twoc2ptest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv, srv.URL
}

// tc2pClient is a Client speaking 2C2P to url with fast retries.
func tc2pClient(t *testing.T, url string, store idempay.KeyStore, mods ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	cfg := idempay.Config{BaseURL: url, Store: store, Credentials: tc2pSecret,
		Provider: twoc2p.Provider{MerchantID: tc2pMerchant},
		Retry: idempay.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond,
			MaxElapsed: 10 * time.Second}}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	return c
}

// requirePending checks the answer of a charge that waits for the
// customer, as every 2C2P payment token does until Payment Inquiry says it
// was paid: the pending charge together with an error matching
// idempay.ErrPending, whose outcome is pending (never succeeded). It
// returns the charge.
func requirePending(t *testing.T, ch *idempay.Charge, err error, msgAndArgs ...any) *idempay.Charge {
	t.Helper()
	require.ErrorIs(t, err, idempay.ErrPending, msgAndArgs...)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err), msgAndArgs...)
	require.NotNil(t, ch, "a pending charge comes with what the customer must be shown")
	require.Equal(t, idempay.StatePending, ch.State, msgAndArgs...)
	return ch
}

// tc2pOrder is a THB 1,234.56 intent.
func tc2pOrder(id string) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: id, Amount: 123456, Currency: "THB", Description: "Order " + id}
}

// tc2pSameInvoice is the intentOf of tests whose intent IDs are already valid
// invoice numbers.
func tc2pSameInvoice(invoiceNo string) string { return invoiceNo }

// tc2pHS256 signs claims with the test secret, by hand.
func tc2pHS256(claims string) string { return twoc2ptest.SignHS256(claims, tc2pSecret.Reveal()) }

// tc2pNow is the fixed clock of the expiry tests: 2025-01-01T00:00:00Z.
var tc2pNow = time.Unix(1735689600, 0)
