package omise_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/omisetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/omise"
	"github.com/stretchr/testify/require"
)

const secret = "skey_test_idempay"

// ns is the namespace of the tests' clients.
const ns = "omise:default"

// startFake serves a fake Omise that checks, on every charge and refund
// request, that the store already holds the request's key for its intent
// or refund, and that the request carries the API version.
func startFake(t *testing.T, store idempay.KeyStore, opts []omisetest.Option) (*omisetest.Server, string) {
	t.Helper()
	srv := omisetest.NewServer(append(opts, omisetest.WithSecretKey(secret), omisetest.WithHook(func(info omisetest.RequestInfo) {
		namespace := info.Form.Get("metadata[" + omise.NamespaceMetadataKey + "]")
		if info.Op == "refund" && info.OpID != "" && namespace != "" {
			rec, err := store.Load(context.Background(), namespace+"/refund", info.OpID)
			if err != nil || rec.Key != info.Key {
				t.Errorf("fake Omise received refund %s with key %q before the store held it (%q, %v)", info.OpID, info.Key, rec.Key, err)
			}
			return
		}
		if info.Op != "" || info.Intent == "" || namespace == "" {
			return // sent by the test itself, not by the client
		}
		if v := info.Request.Header.Get("Omise-Version"); v != omise.DefaultVersion {
			t.Errorf("Omise-Version %q", v)
		}
		rec, err := store.Load(context.Background(), namespace, info.Intent)
		if err != nil || rec.Key != info.Key {
			t.Errorf("fake Omise received %s with key %q before the store held it (%q, %v)", info.Intent, info.Key, rec.Key, err)
		}
	}))...)
	t.Cleanup(srv.Close)
	return srv, srv.URL
}

func fastRetry() idempay.RetryPolicy {
	return idempay.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond,
		MaxElapsed: 10 * time.Second}
}

func newClient(t *testing.T, url string, store idempay.KeyStore, mods ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	cfg := idempay.Config{BaseURL: url, Credentials: secret, Store: store, Retry: fastRetry(), Provider: omise.Provider{}}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	return c
}

type fixture struct {
	srv    *omisetest.Server
	client *idempay.Client
	store  idempay.KeyStore
	target idempay.Target
}

func setup(t *testing.T, opts []omisetest.Option, mods ...func(*idempay.Config)) fixture {
	t.Helper()
	return setupStore(t, memstore.New(), opts, mods...)
}

// setupOnClock is setup with the KeyStore and the fake Omise on one clock,
// which the test moves: every time in a record (the reservation a lookup's
// list window starts from, a key's age) is the store's, and Omise stamps
// its charges in true time, as the store does in production.
func setupOnClock(t *testing.T, opts []omisetest.Option, now func() time.Time, mods ...func(*idempay.Config)) fixture {
	t.Helper()
	return setupStore(t, memstore.New(memstore.WithClock(now)), append(opts, omisetest.WithSettings(fakes.Settings{Clock: now})), mods...)
}

func setupStore(t *testing.T, store idempay.KeyStore, opts []omisetest.Option, mods ...func(*idempay.Config)) fixture {
	t.Helper()
	srv, base := startFake(t, store, opts)
	u, _ := url.Parse(base)
	return fixture{srv: srv, client: newClient(t, base, store, mods...), store: store,
		target: idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}}
}

// requirePending checks the answer of a charge that waits for the
// customer (3-D Secure, an offsite source): the pending charge together
// with an error matching idempay.ErrPending, whose outcome is pending
// (never succeeded). It returns the charge.
func requirePending(t *testing.T, ch *idempay.Charge, err error) *idempay.Charge {
	t.Helper()
	require.ErrorIs(t, err, idempay.ErrPending)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch, "a pending charge comes with what the customer must be shown")
	require.Equal(t, idempay.StatePending, ch.State)
	return ch
}

func thb(id, token string) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: id, Amount: 150000, Currency: "THB", Source: idempay.Secret(token)}
}
