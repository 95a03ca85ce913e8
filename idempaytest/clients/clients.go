// Package clients wires an idempay.Client to each provider fake of
// idempaytest, as idempaytest.NewClient does for the own-API Server: the
// fake's URL and HTTP client, credentials the fake accepts, the adapter, a
// fresh in-memory store and idempaytest.FastRetry. When the test ends the
// client is closed (waiting up to idempaytest.CloseTimeout for charges still
// running) and then the fake's books are checked (CheckMoney): a test that
// charged an intent twice, or refunded beyond a charge, fails.
//
// It is a package of its own, beside the fakes rather than inside them,
// because the fakes import no adapter (they check the adapters' wire
// independently) and each adapter's own tests import its fake.
//
//	srv := stripetest.NewServer()
//	defer srv.Close()
//	client := clients.Stripe(t, srv)
//	srv.Fail("order-1", fakes.Post) // charged, the answer lost
//	ch, err := client.Charge(ctx, req) // succeeded, replayed by the fake
package clients

import (
	"context"
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/idempay/idempay/provider/twoc2p"
)

// The credentials the clients send. The fakes accept any key unless told
// otherwise (stripetest.WithAPIKey, omisetest.WithSecretKey): give the same
// one there, or set Config.Credentials with an option.
const (
	StripeKey = "sk_test_idempaytest"
	OmiseKey  = "skey_test_idempaytest"
)

// fake is what every provider fake offers a client.
type fake interface {
	Client() *http.Client
	CheckMoney() error
}

// Stripe returns a client of srv with provider/stripe.
func Stripe(t testing.TB, srv *stripetest.Server, opts ...idempaytest.ClientOption) *idempay.Client {
	t.Helper()
	return wire(t, srv, idempay.Config{BaseURL: srv.URL, Credentials: StripeKey, Provider: stripe.Provider{}}, opts)
}

// Omise returns a client of srv with provider/omise.
func Omise(t testing.TB, srv *omisetest.Server, opts ...idempaytest.ClientOption) *idempay.Client {
	t.Helper()
	return wire(t, srv, idempay.Config{BaseURL: srv.URL, Credentials: OmiseKey, Provider: omise.Provider{}}, opts)
}

// TwoC2P returns a client of srv with provider/twoc2p, as the fake's default
// merchant (twoc2ptest.DefaultMerchantID, DefaultSecret) paying by card.
// A server made WithMerchant needs an option that sets the same merchant.
func TwoC2P(t testing.TB, srv *twoc2ptest.Server, opts ...idempaytest.ClientOption) *idempay.Client {
	t.Helper()
	p := twoc2p.Provider{MerchantID: twoc2ptest.DefaultMerchantID, PaymentChannel: []string{"CC"}}
	return wire(t, srv, idempay.Config{BaseURL: srv.URL, Credentials: twoc2ptest.DefaultSecret, Provider: p}, opts)
}

func wire(t testing.TB, srv fake, cfg idempay.Config, opts []idempaytest.ClientOption) *idempay.Client {
	t.Helper()
	cfg.HTTPClient = srv.Client()
	cfg.Store = memstore.New()
	cfg.Retry = idempaytest.FastRetry()
	for _, opt := range opts {
		opt(&cfg)
	}
	c, err := idempay.New(cfg)
	if err != nil {
		t.Fatalf("clients: %v", err)
	}
	// Cleanups run last registered first: the books are checked after the
	// client is closed, so that nothing it still runs can charge after.
	t.Cleanup(func() {
		if err := srv.CheckMoney(); err != nil {
			t.Errorf("clients: the fake's books: %v", err)
		}
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), idempaytest.CloseTimeout)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("clients: %v; the books' check may miss what it charges", err)
		}
	})
	return c
}
