package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storedCharge is the charge an intent's record keeps for replay.
func storedCharge(t *testing.T, store idempay.KeyStore, intentID string) (idempay.Record, idempay.Charge) {
	t.Helper()
	rec, err := store.Load(context.Background(), ns, intentID)
	require.NoError(t, err)
	var out struct {
		Charge *idempay.Charge `json:"charge"`
	}
	require.NoError(t, json.Unmarshal(rec.Result, &out), "%s", rec.Result)
	require.NotNil(t, out.Charge, "%s", rec.Result)
	return rec, *out.Charge
}

// requireScrubbed checks that raw, a PaymentIntent as kept, still is one
// (the answer minus its secrets, not dropped) and that each secret member
// it has is redacted.
func requireScrubbed(t *testing.T, raw json.RawMessage, id string) {
	t.Helper()
	require.NotEmpty(t, raw, "Raw keeps the answer")
	var pi map[string]any
	require.NoError(t, json.Unmarshal(raw, &pi))
	assert.Equal(t, id, pi["id"], "the answer is kept, minus its secrets")
	for _, k := range []string{"client_secret", "payment_method"} {
		if v, ok := pi[k]; ok && v != nil {
			assert.Equal(t, "[redacted]", v, k)
		}
	}
}

// Rule (issue 9 item 7): Charge.Raw, kept in the store, never holds a
// secret. Stripe's PaymentIntent carries its client_secret (which confirms
// the payment from a frontend) and the payment_method, which for a test
// card alias is a new PaymentMethod ID, not the Source sent, so redacting
// the Source alone does not take it out. Neither is in the record, nor in
// the charge the caller gets, whatever path the answer took: fresh,
// replayed by Stripe after a lost answer, pending 3-D Secure.
func TestStoredChargeHoldsNoSecret(t *testing.T) {
	for _, tc := range []struct {
		name, intent, source string
		faults               []fakes.Fault
		state                idempay.State
	}{
		{"fresh", "fresh", "pm_card_visa", nil, idempay.StateSucceeded},
		{"replayed", "replayed", "pm_card_mastercard", []fakes.Fault{fakes.Post}, idempay.StateSucceeded},
		{"pending 3-D Secure", "3ds", "pm_card_threeDSecure2Required", nil, idempay.StatePending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c, store := setup(t, nil)
			srv.Fail(tc.intent, tc.faults...)
			req := order(tc.intent, tc.source)
			req.ReturnURL = "https://shop.example/back"
			ch, err := c.Charge(context.Background(), req)
			if tc.state == idempay.StatePending {
				requirePending(t, ch, err)
			} else {
				require.NoError(t, err)
			}
			pi, ok := srv.PaymentIntent(ch.ID)
			require.True(t, ok)
			require.NotEmpty(t, pi.ClientSecret, "the fake answers with a client secret, as Stripe does")
			require.NotNil(t, pi.PaymentMethod)
			secrets := map[string]string{"client_secret": pi.ClientSecret, "payment_method": *pi.PaymentMethod,
				"Source": tc.source, "API key": secret}

			rec, kept := storedCharge(t, store, tc.intent)
			assert.Equal(t, tc.state, rec.State)
			for what, s := range secrets {
				assert.NotContains(t, string(rec.Result), s, "the record holds the %s", what)
				assert.NotContains(t, string(ch.Raw), s, "the caller's charge holds the %s", what)
			}
			requireScrubbed(t, kept.Raw, ch.ID)
			requireScrubbed(t, ch.Raw, ch.ID)

			// Answered from the store, the charge is as clean.
			again, err := c.Charge(context.Background(), req)
			if tc.state == idempay.StatePending {
				again = requirePending(t, again, err)
			} else {
				require.NoError(t, err)
			}
			for what, s := range secrets {
				assert.NotContains(t, string(again.Raw), s, "the replayed charge holds the %s", what)
			}
		})
	}
}

// The PaymentIntent of Stripe's own OpenAPI fixtures, with its real-shaped
// client secret, answered to a charge: the stored charge keeps the
// PaymentIntent without the secret.
func TestStoredFixtureHoldsNoClientSecret(t *testing.T) {
	var f struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(upstream(t, "stripe-openapi_fixtures3.json"), &f))
	body := f.Resources["payment_intent"]
	var pi struct {
		ID           string `json:"id"`
		ClientSecret string `json:"client_secret"`
	}
	require.NoError(t, json.Unmarshal(body, &pi))
	require.True(t, strings.Contains(pi.ClientSecret, "_secret_"), pi.ClientSecret)

	store := memstore.New()
	tg := replay(t, http.StatusOK, http.Header{"Request-Id": {"req_fixture"}}, body)
	c := newClient(t, tg.BaseURL.String(), store)
	ch, err := c.Charge(context.Background(), order("o-fixture", "pm_card_visa"))
	requirePending(t, ch, err) // requires_payment_method, not confirmed by the adapter
	_, kept := storedCharge(t, store, "o-fixture")
	assert.NotContains(t, string(kept.Raw), pi.ClientSecret)
	assert.NotContains(t, string(ch.Raw), pi.ClientSecret)
	requireScrubbed(t, kept.Raw, pi.ID)
}
