package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstreamFile reads a provider's upstream fixture (copied, with its
// source, into that adapter's testdata/upstream).
func upstreamFile(t *testing.T, provider, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "provider", provider, "testdata", "upstream", name))
	require.NoError(t, err)
	return b
}

// deliverTwice posts each signed body twice to a handler over v and
// returns the event IDs the handler ran for: a redelivery is answered
// without running it again.
func deliverTwice(t *testing.T, v webhook.Verifier, provider string, bodies map[string]http.Header) []string {
	t.Helper()
	dedup, err := webhook.NewDeduper(memstore.New(), provider, "default")
	require.NoError(t, err)
	var handled []string
	h, err := webhook.NewHandler(v, dedup, func(_ context.Context, ev webhook.Event) error {
		handled = append(handled, ev.ID)
		return nil
	})
	require.NoError(t, err)
	for body, header := range bodies {
		for range 2 {
			r := httptest.NewRequest(http.MethodPost, "/webhooks/"+provider, bytes.NewReader([]byte(body)))
			r.Header = header.Clone()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, http.StatusOK, w.Code, body[:40])
		}
	}
	return handled
}

// The events in omise-go's and omise-php's fixtures, signed as Omise
// signs, are each handled once under their event IDs.
func TestUpstreamOmiseEvents(t *testing.T) {
	const secret idempay.Secret = "c2VjcmV0LWZvci10ZXN0cw=="
	v, err := webhook.NewOmise(secret)
	require.NoError(t, err)
	bodies := map[string]http.Header{}
	for _, f := range []string{"omise-go_evnt_test_526yctupnje5mbldskd-get.json", "omise-php_evnt_test_no1t4tnemucod0e51mo-get.json"} {
		b := upstreamFile(t, "omise", f)
		bodies[string(b)] = idempaytest.SignOmiseWebhook(b, secret, time.Now())
	}
	assert.ElementsMatch(t, []string{"evnt_test_526yctupnje5mbldskd", "evnt_test_no1t4tnemucod0e51mo"},
		deliverTwice(t, v, "omise", bodies))
}

// The event of Stripe's OpenAPI fixtures, signed as Stripe signs (the
// signer agrees with stripe-go's: bench/webhook_oracle_test.go), is handled
// once under its event ID.
func TestUpstreamStripeEvent(t *testing.T) {
	var f struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(upstreamFile(t, "stripe", "stripe-openapi_fixtures3.json"), &f))
	body := []byte(f.Resources["event"])
	v, err := webhook.NewStripe(stripeSecret)
	require.NoError(t, err)
	header := idempaytest.SignStripeWebhook(body, stripeSecret, time.Now())
	assert.Equal(t, []string{"evt_1Pgc76B7WZ01zgkWwyRHS12y"}, deliverTwice(t, v, "stripe", map[string]http.Header{string(body): header}))
}
