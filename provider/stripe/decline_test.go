package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/stripetest"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A card declined under a key whose 402 was replaced by a stored 500 is
// found by search as requires_payment_method with the last_payment_error of
// the adapter's own confirm: it is the decline it was, as final as the 402.
func TestStoredFailureOverADeclineSettlesAsTheDecline(t *testing.T) {
	srv, c, store := setup(t, []stripetest.Option{stripetest.WithStoredDeclines()})
	ctx := context.Background()
	req := order("declined", "pm_card_visa_chargeDeclined")
	_, err := c.Charge(ctx, req)
	require.ErrorIs(t, err, idempay.ErrStoredFailure)
	require.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "the 500 alone cannot tell")
	sent := srv.Stats().Requests // the 500, then its replay

	_, err = c.Settle(ctx, "declined")
	require.ErrorIs(t, err, idempay.ErrDeclined)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	var apiErr *idempay.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "card_declined", apiErr.Code)
	assert.Equal(t, "generic_decline", apiErr.DeclineCode)
	rec, err := store.Load(ctx, c.Namespace(), "declined")
	require.NoError(t, err)
	assert.Equal(t, idempay.StateFailed, rec.State)
	assert.Equal(t, sent, srv.Stats().Requests, "settled by search, never resent")
	assert.Zero(t, srv.Ledger().Count("declined"))
}

// The real 402 body Stripe's test mode sent (recorded by Zulip) carries the
// declined PaymentIntent. Tagged as the adapter tags what it confirms, that
// PaymentIntent reads as the same decline on every path: inside the 402,
// as a 200, by retrieve and by search. Without the adapter's confirm tag
// (confirmed by someone else, say a frontend) it stays pending: it can be
// confirmed again.
func TestOneDeclineOneReading(t *testing.T) {
	var body struct {
		Error struct {
			PaymentIntent map[string]any `json:"payment_intent"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(upstream(t, "zulip_replace_payment_method--Invoice.pay.2.http_body.json"), &body))
	pi := body.Error.PaymentIntent
	pi["id"] = "pi_zulip"
	rec := idempay.Record{Namespace: ns, ID: "order-1", ProviderRef: "pi_zulip"}
	tag := func(confirmed bool) []byte {
		meta := map[string]any{stripe.IntentMetadataKey: "order-1", stripe.NamespaceMetadataKey: ns}
		if confirmed {
			meta[stripe.ConfirmMetadataKey] = "true"
		}
		pi["metadata"] = meta
		b, err := json.Marshal(pi)
		require.NoError(t, err)
		return b
	}
	search := func(b []byte) []byte { return []byte(`{"object":"search_result","data":[` + string(b) + `]}`) }
	declined := func(t *testing.T, v idempay.Verdict) {
		t.Helper()
		require.Equal(t, idempay.KindDeclined, v.Kind)
		assert.Equal(t, "card_declined", v.Err.Code)
		assert.Equal(t, "generic_decline", v.Err.DeclineCode)
		assert.Equal(t, "card_error", v.Err.Type)
	}

	find := func(t *testing.T, body []byte, rec idempay.Record) idempay.Verdict {
		t.Helper()
		v, err := stripe.Provider{}.FindCharge(context.Background(), nil, replay(t, http.StatusOK, nil, body), rec)
		require.NoError(t, err)
		return v
	}
	declined(t, readCharge(t, http.StatusPaymentRequired, http.Header{}, upstream(t, "zulip_replace_payment_method--Invoice.pay.2.http_body.json")))
	confirmed := tag(true)
	declined(t, readCharge(t, http.StatusOK, http.Header{}, confirmed))
	declined(t, find(t, confirmed, rec))
	bySearch := rec
	bySearch.ProviderRef = ""
	declined(t, find(t, search(confirmed), bySearch))

	other := tag(false)
	assert.Equal(t, idempay.KindPending, find(t, search(other), bySearch).Kind, "not the adapter's confirm: it can be confirmed again")
	assert.Equal(t, idempay.KindPending, readCharge(t, http.StatusOK, http.Header{}, other).Kind)
}
