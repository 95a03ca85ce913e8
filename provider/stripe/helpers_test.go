package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/require"
)

const secret = "sk_test_idempay"

// ns is the namespace of the tests' clients.
const ns = "stripe:default"

// startFake serves a fake Stripe that checks, on every charge request,
// that the store already holds the request's key for its intent, and on
// every refund and capture the client sends, for its operation ID: the key
// is written before the first byte is sent. Requests the test sends itself
// carry a key starting with "direct-".
func startFake(t *testing.T, store idempay.KeyStore, opts []stripetest.Option) (*stripetest.Server, string) {
	t.Helper()
	srv := stripetest.NewServer(append(opts, stripetest.WithAPIKey(secret), stripetest.WithHook(func(info stripetest.RequestInfo) {
		if info.Op != "" && info.OpID != "" && !strings.HasPrefix(info.Key, "direct-") {
			rec, err := store.Load(context.Background(), ns+"/"+info.Op, info.OpID)
			if err != nil || rec.Key != info.Key {
				t.Errorf("fake Stripe received %s %s with key %q before the store held it (%q, %v)", info.Op, info.OpID, info.Key, rec.Key, err)
			}
			return
		}
		namespace := info.Form.Get("metadata[" + stripe.NamespaceMetadataKey + "]")
		if info.Op != "" || info.Intent == "" || namespace == "" || info.Key == "" {
			return // sent by the test itself, not by the client
		}
		rec, err := store.Load(context.Background(), namespace, info.Intent)
		if err != nil || rec.Key != info.Key {
			t.Errorf("fake Stripe received %s with key %q before the store held it (%q, %v)", info.Intent, info.Key, rec.Key, err)
		}
	}))...)
	t.Cleanup(srv.Close)
	return srv, srv.URL
}

// fastRetry keeps every test in milliseconds.
func fastRetry() idempay.RetryPolicy {
	return idempay.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond,
		MaxElapsed: 10 * time.Second}
}

func newClient(t *testing.T, url string, store idempay.KeyStore, mods ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	cfg := idempay.Config{BaseURL: url, Credentials: secret, Store: store, Retry: fastRetry(),
		Provider: stripe.Provider{APIVersion: "2024-06-20"}}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	require.NoError(t, err)
	return c
}

func setup(t *testing.T, opts []stripetest.Option, mods ...func(*idempay.Config)) (*stripetest.Server, *idempay.Client, idempay.KeyStore) {
	t.Helper()
	return setupStore(t, memstore.New(), opts, mods...)
}

// setupStore is setup on a given store: one whose clock the test moves
// (memstore.WithClock), since every age of a key is read on the store's
// clock.
func setupStore(t *testing.T, store idempay.KeyStore, opts []stripetest.Option, mods ...func(*idempay.Config)) (*stripetest.Server, *idempay.Client, idempay.KeyStore) {
	t.Helper()
	srv, url := startFake(t, store, opts)
	return srv, newClient(t, url, store, mods...), store
}

// requirePending checks the answer of a charge that waits for the
// customer: the pending charge together with an error matching
// idempay.ErrPending, whose outcome is pending (never succeeded). It
// returns the charge.
func requirePending(t *testing.T, ch *idempay.Charge, err error) *idempay.Charge {
	t.Helper()
	require.ErrorIs(t, err, idempay.ErrPending)
	require.Equal(t, idempay.OutcomePending, idempay.OutcomeOf(err))
	require.NotNil(t, ch, "a pending charge comes with what the customer must be shown")
	require.Equal(t, idempay.StatePending, ch.State)
	return ch
}

func order(id, pm string) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: id, Amount: 1500, Currency: "JPY", Source: idempay.Secret(pm)}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
