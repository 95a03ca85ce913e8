package idempay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// currencyless serves the own API's charge and refund endpoints with
// answers that name no currency (charge: chargeAnswer; refund: an echo of
// the amount), and records the currency each refund was sent in.
func currencyless(t *testing.T, chargeAnswer string) (*httptest.Server, *[]string) {
	t.Helper()
	var refundCurrencies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/payments/charge":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, chargeAnswer)
		case idempay.DefaultRefundPath:
			cur, _ := m["currency"].(string)
			refundCurrencies = append(refundCurrencies, cur)
			_, _ = io.WriteString(w, `{"id":"rf_1","status":"succeeded","amount":500}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &refundCurrencies
}

// An own API whose answer names no currency: the charge is recorded in the
// currency that was charged, and a refund of it is sent in that currency,
// never in an invented JPY.
func TestOwnAPIAnswerWithoutCurrencyKeepsTheChargedCurrency(t *testing.T) {
	srv, sent := currencyless(t, `{"order_id":"o1","charge_id":"ch_1","status":"succeeded","amount":1999}`)
	c, err := idempay.New(idempay.Config{BaseURL: srv.URL, Store: memstore.New()})
	require.NoError(t, err)
	defer c.Close(context.Background())
	ch, err := c.Charge(context.Background(), idempay.ChargeRequest{IntentID: "o1", Amount: 1999, Currency: "usd", Source: "tokn_1"})
	require.NoError(t, err)
	assert.Equal(t, "USD", ch.Currency)

	_, err = c.Refund(context.Background(), idempay.RefundRequest{RefundID: "r1", IntentID: "o1", Amount: 500, Currency: "USD"})
	require.NoError(t, err, "a USD refund of a USD charge")
	assert.Equal(t, []string{"USD"}, *sent)
	l, err := c.Ledger(context.Background(), "o1")
	require.NoError(t, err)
	assert.Equal(t, "USD", l.Currency)
}

// An answer with the article's amount_jpy alone says yen: for a charge made
// in another currency it contradicts the request, and settles nothing.
func TestOwnAPIAnswerInYenForAnotherCurrencyIsUnknown(t *testing.T) {
	srv, _ := currencyless(t, `{"order_id":"o1","charge_id":"ch_1","status":"succeeded","amount_jpy":1999}`)
	c, err := idempay.New(idempay.Config{BaseURL: srv.URL, Store: memstore.New(), Retry: idempay.RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	defer c.Close(context.Background())
	_, err = c.Charge(context.Background(), idempay.ChargeRequest{IntentID: "o1", Amount: 1999, Currency: "USD", Source: "tokn_1"})
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err), "err: %v", err)
}

// Read without the request (a lookup's answer), an answer that names no
// currency and no amount_jpy cannot say what was charged: unknown. With
// amount_jpy it says yen.
func TestOwnAPIReadChargeWithoutCurrencyOrRequest(t *testing.T) {
	read := func(body string) idempay.Verdict {
		return idempay.OwnAPI{}.ReadCharge(&http.Response{StatusCode: 200, Header: http.Header{}}, []byte(body))
	}
	v := read(`{"order_id":"o1","charge_id":"ch_1","status":"succeeded","amount":1999}`)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
	v = read(`{"order_id":"o1","charge_id":"ch_1","status":"succeeded","amount_jpy":1500}`)
	require.Equal(t, idempay.KindSucceeded, v.Kind)
	assert.Equal(t, "JPY", v.Charge.Currency)
	v = read(`{"order_id":"o1","charge_id":"ch_1","status":"failed"}`)
	assert.Equal(t, idempay.KindDeclined, v.Kind, "a decline needs no currency")
}
