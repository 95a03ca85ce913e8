package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fixtures"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func upstream(t *testing.T, name string) []byte { return fixtures.Upstream(t, name) }

// replay answers every request with status, header and body, as Stripe
// did.
func replay(t *testing.T, status int, header http.Header, body []byte) idempay.Target {
	return idempay.Target{BaseURL: fixtures.Replay(t, status, header, body), Credentials: secret, Namespace: ns}
}

// readCharge sends a charge request to a server replaying the answer and
// reads it the way the Client does.
func readCharge(t *testing.T, status int, header http.Header, body []byte) idempay.Verdict {
	t.Helper()
	req, err := stripe.Provider{}.NewChargeRequest(context.Background(), replay(t, status, header, body), order("o1", "pm_card_visa"), "k1")
	require.NoError(t, err)
	return fixtures.ReadCharge(t, stripe.Provider{}, req)
}

// zulipHeaders are the headers recorded with the 402 (see SOURCES.txt).
func zulipHeaders() http.Header {
	return http.Header{"Stripe-Should-Retry": {"false"}, "Request-Id": {"req_NORMALIZED"},
		"Stripe-Version": {"2025-11-17.clover"}}
}

// TestStripeFixtureDecline reads the real 402 card_error, with its
// headers, as a final decline: codes, request ID and Stripe's word not to
// retry; through a Client it ends failed after one request.
func TestStripeFixtureDecline(t *testing.T) {
	body := upstream(t, "zulip_replace_payment_method--Invoice.pay.2.http_body.json")
	v := readCharge(t, http.StatusPaymentRequired, zulipHeaders(), body)
	require.Equal(t, idempay.KindDeclined, v.Kind)
	assert.Equal(t, "card_error", v.Err.Type)
	assert.Equal(t, "card_declined", v.Err.Code)
	assert.Equal(t, "generic_decline", v.Err.DeclineCode)
	assert.Equal(t, "Your card was declined.", v.Err.Message)
	assert.Equal(t, "req_NORMALIZED", v.RequestID)
	assert.Equal(t, idempay.RetryNo, v.Retry)
	assert.False(t, v.Replayed)

	tg := replay(t, http.StatusPaymentRequired, zulipHeaders(), body)
	c, err := idempay.New(idempay.Config{BaseURL: tg.BaseURL.String(), Credentials: secret, Store: memstore.New(),
		Provider: stripe.Provider{}, Retry: fastRetry()})
	require.NoError(t, err)
	_, err = c.Charge(context.Background(), order("o1", "pm_card_visa"))
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var ce *idempay.ChargeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 1, ce.Requests)
}

// TestStripeFixturesOpenAPI reads every resource of Stripe's OpenAPI
// fixtures (what stripe-mock answers with) as a 200 charge answer: the
// PaymentIntent is what its status says (requires_payment_method, not
// confirmed by the adapter: pending), and every other object, not being a
// PaymentIntent, settles nothing.
func TestStripeFixturesOpenAPI(t *testing.T) {
	var f struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(upstream(t, "stripe-openapi_fixtures3.json"), &f))
	require.Greater(t, len(f.Resources), 100)
	names := make([]string, 0, len(f.Resources))
	for name := range f.Resources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := readCharge(t, http.StatusOK, nil, f.Resources[name])
		if name != "payment_intent" {
			assert.Equal(t, idempay.KindUnknown, v.Kind, "%s is not a PaymentIntent", name)
			continue
		}
		require.Equal(t, idempay.KindPending, v.Kind)
		assert.Equal(t, "pi_1PgafyB7WZ01zgkWSjxsAJo3", v.Charge.ID)
		assert.Equal(t, int64(1099), v.Charge.Amount)
		assert.Equal(t, "USD", v.Charge.Currency)
		assert.Equal(t, "requires_payment_method", v.Charge.Status)
		assert.Equal(t, idempay.StatePending, v.Charge.State)
	}

	// Found by retrieve, the fixture's PaymentIntent has no idempay tag:
	// it was not made for the intent, whatever the record says.
	pi := f.Resources["payment_intent"]
	_, err := stripe.Provider{}.FindCharge(context.Background(), nil, replay(t, http.StatusOK, nil, pi),
		idempay.Record{Namespace: ns, ID: "o1", ProviderRef: "pi_1PgafyB7WZ01zgkWSjxsAJo3"})
	assert.ErrorIs(t, err, stripe.ErrForeignIntent)
}
