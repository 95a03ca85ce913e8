package idempay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBadInputIsRefusedBeforeAnythingIsSent(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("never"))
	c := newClient(t, s.server.URL, store)
	cases := []struct {
		name  string
		field string
		edit  func(*idempay.ChargeRequest)
	}{
		{"empty intent ID", "IntentID", func(r *idempay.ChargeRequest) { r.IntentID = "" }},
		{"intent ID with a newline", "IntentID", func(r *idempay.ChargeRequest) { r.IntentID = "a\nb" }},
		{"intent ID too long", "IntentID", func(r *idempay.ChargeRequest) { r.IntentID = strings.Repeat("x", 256) }},
		{"zero amount", "Amount", func(r *idempay.ChargeRequest) { r.Amount = 0 }},
		{"negative amount", "Amount", func(r *idempay.ChargeRequest) { r.Amount = -1500 }},
		{"amount that overflows", "Amount", func(r *idempay.ChargeRequest) { r.Amount = math.MaxInt64 }},
		{"amount past 2^53", "Amount", func(r *idempay.ChargeRequest) { r.Amount = idempay.MaxAmount + 1 }},
		{"unknown currency", "Currency", func(r *idempay.ChargeRequest) { r.Currency = "ABC" }},
		{"currency not three letters", "Currency", func(r *idempay.ChargeRequest) { r.Currency = "YEN" + "N" }},
		{"no-currency code", "Currency", func(r *idempay.ChargeRequest) { r.Currency = "XXX" }},
		{"key over 255 characters", "Key", func(r *idempay.ChargeRequest) { r.Key = strings.Repeat("k", 256) }},
		{"key with a control character", "Key", func(r *idempay.ChargeRequest) { r.Key = "abc\x00def" }},
		{"key with a space", "Key", func(r *idempay.ChargeRequest) { r.Key = "abc def" }},
		{"metadata with an empty key", "Metadata", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"": "x"} }},
		{"source with control characters", "Source", func(r *idempay.ChargeRequest) { r.Source = "tok\r\nX-Evil: 1" }},
		{"intent ID of only spaces", "IntentID", func(r *idempay.ChargeRequest) { r.IntentID = "   " }},
		{"intent ID with a trailing space", "IntentID", func(r *idempay.ChargeRequest) { r.IntentID = "order-1 " }},
		{"description with a control character", "Description", func(r *idempay.ChargeRequest) { r.Description = "a\x1bb" }},
		{"description too long", "Description", func(r *idempay.ChargeRequest) { r.Description = strings.Repeat("d", 1001) }},
		{"description of only spaces", "Description", func(r *idempay.ChargeRequest) { r.Description = "  " }},
		{"customer with a space", "Customer", func(r *idempay.ChargeRequest) { r.Customer = "cus 1" }},
		{"customer too long", "Customer", func(r *idempay.ChargeRequest) { r.Customer = strings.Repeat("c", 256) }},
		{"return URL relative", "ReturnURL", func(r *idempay.ChargeRequest) { r.ReturnURL = "/back" }},
		{"return URL javascript", "ReturnURL", func(r *idempay.ChargeRequest) { r.ReturnURL = "javascript:alert(1)" }},
		{"return URL with credentials", "ReturnURL", func(r *idempay.ChargeRequest) { r.ReturnURL = "https://u:p@shop.example/back" }},
		{"return URL data", "ReturnURL", func(r *idempay.ChargeRequest) { r.ReturnURL = "data:text/html,x" }},
		{"return URL https without host", "ReturnURL", func(r *idempay.ChargeRequest) { r.ReturnURL = "https:///back" }},
		{"metadata using idempay's tag", "Metadata", func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"idempay_intent": "x"} }},
		{"metadata with too many entries", "Metadata", func(r *idempay.ChargeRequest) {
			r.Metadata = map[string]string{}
			for i := range 51 {
				r.Metadata[fmt.Sprint("k", i)] = "v"
			}
		}},
		{"extra with a control character", "Extra", func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"k": "a\x00"} }},
		{"own API: a customer it cannot send", "Customer", func(r *idempay.ChargeRequest) { r.Customer = "cus_1" }},
		{"own API: no token", "Source", func(r *idempay.ChargeRequest) { r.Source = "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := order("bad-input")
			tc.edit(&req)
			_, err := c.Charge(context.Background(), req)
			var ve *idempay.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Field)
			assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
			assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
		})
	}
	_, err := c.Charge(nil, order("bad-input")) //nolint:staticcheck // a nil context is the bad input
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve, "a nil context is refused, not a panic")
	assert.Zero(t, s.hits.Load(), "the server saw no request")
	_, err = store.Load(context.Background(), c.Namespace(), "bad-input")
	assert.ErrorIs(t, err, idempay.ErrNotFound, "and nothing was stored")
}

func TestBadConfigIsRefused(t *testing.T) {
	store := memstore.New()
	var typedNil *memstore.Store
	cases := map[string]idempay.Config{
		"nil KeyStore":              {BaseURL: "http://127.0.0.1:1"},
		"typed-nil KeyStore":        {BaseURL: "http://127.0.0.1:1", Store: typedNil},
		"retention at the window":   {BaseURL: "http://127.0.0.1:1", Store: store, KeyRetention: 24 * time.Hour},
		"retention past the window": {BaseURL: "http://127.0.0.1:1", Store: store, KeyRetention: 25 * time.Hour},
		"retry budget past retention": {BaseURL: "http://127.0.0.1:1", Store: store, KeyRetention: time.Hour,
			Retry: idempay.RetryPolicy{MaxElapsed: 2 * time.Hour}},
		"lease too short to renew": {BaseURL: "http://127.0.0.1:1", Store: store, Lease: 10 * time.Millisecond},
		"negative retention":       {BaseURL: "http://127.0.0.1:1", Store: store, KeyRetention: -time.Hour},
		"base URL without scheme":  {BaseURL: "api.example.com/v1", Store: store},
		"base URL ftp":             {BaseURL: "ftp://example.com", Store: store},
		"base URL empty":           {Store: store},
		"base URL with userinfo":   {BaseURL: "https://user:pw@example.com", Store: store},
		"negative attempts":        {BaseURL: "http://127.0.0.1:1", Store: store, Retry: idempay.RetryPolicy{MaxAttempts: -1}},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := idempay.New(cfg)
			assert.Nil(t, c)
			var ce *idempay.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, idempay.ErrConfig)
			assert.NotContains(t, err.Error(), "pw", "userinfo is not echoed")
		})
	}
}

func TestZeroDecimalAmountsAreMinorUnits(t *testing.T) {
	for code, exp := range map[string]int{"JPY": 0, "KRW": 0, "usd": 2, "THB": 2, "BHD": 3} {
		got, err := idempay.CurrencyExponent(code)
		require.NoError(t, err, code)
		assert.Equal(t, exp, got, code)
	}
}

func TestSecretsNeverAppear(t *testing.T) {
	const apiKey, token = "sk_live_APIKEY_SECRET", "tokn_CARD_SECRET"
	store := memstore.New()
	// The provider echoes the token and the key it refused, as real ones do.
	s := newStub(t, store, status(402, `{"error":{"type":"card_error","code":"card_declined",
		"message":"No such token: tokn_CARD_SECRET (key sk_live_APIKEY_SECRET)","param":"tokn_CARD_SECRET"}}`))
	var logs bytes.Buffer
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) {
		cfg.Credentials = apiKey
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	req := order("secret-check")
	req.Source = token
	_, err := c.Charge(context.Background(), req)
	require.Error(t, err)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("request", "req", req)

	printed := strings.Join([]string{
		err.Error(), fmt.Sprintf("%v %+v %#v %s %q %x", req, req, req, req.Source, req.Source, req.Source),
		fmt.Sprint(idempay.Secret(apiKey)), logs.String(),
	}, "\n")
	assert.NotContains(t, printed, "SECRET")
	assert.NotEmpty(t, logs.String(), "the attempts were logged")
	rec, err := store.Load(context.Background(), c.Namespace(), "secret-check")
	require.NoError(t, err)
	assert.NotContains(t, fmt.Sprintf("%+v %s", rec, rec.Result), "SECRET", "the store keeps no secret")
}

func TestEmptyAndNilMapsAreTheSamePayment(t *testing.T) {
	store := memstore.New()
	s := newStub(t, store, created("ch_m"))
	c := newClient(t, s.server.URL, store)
	first := order("o-maps")
	_, err := c.Charge(context.Background(), first)
	require.NoError(t, err)
	again := order("o-maps")
	again.Metadata, again.Extra = map[string]string{}, map[string]string{}
	again.Currency = "jpy"
	ch, err := c.Charge(context.Background(), again)
	require.NoError(t, err, "an empty map, a nil map and the currency's case do not make another payment")
	assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom)
}

// TestSecretsStayOutOfRawAndSnippets: the charge kept in the store (Raw)
// holds the provider's answer minus what it echoes of the request's secrets
// and its own client secrets; and an answer quoted into an error, cut to a
// length, never leaks the first part of a secret that straddles the cut.
func TestSecretsStayOutOfRawAndSnippets(t *testing.T) {
	const token = "tokn_CARD_SECRET_0123456789"
	store := memstore.New()
	s := newStub(t, store, func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			OrderID string `json:"order_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		if b.OrderID == "snippet" {
			w.WriteHeader(500) // not JSON: quoted into the error, cut at 200 bytes
			io.WriteString(w, strings.Repeat("x", 190)+token+strings.Repeat("y", 50))
			return
		}
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"order_id":%q,"charge_id":"ch_raw","status":"succeeded","amount_jpy":1500,
			"omise_token":%q,"client_secret":"pi_1_secret_CLIENTSECRET","nested":{"client_secret":"x_SECRET"}}`, b.OrderID, token)
	})
	c := newClient(t, s.server.URL, store, func(cfg *idempay.Config) { cfg.Retry.MaxAttempts = 1 })
	req := order("raw")
	req.Source = token
	ch, err := c.Charge(context.Background(), req)
	require.NoError(t, err)
	assert.NotContains(t, string(ch.Raw), "SECRET")
	assert.Contains(t, string(ch.Raw), "ch_raw", "the rest of the answer is kept")
	rec, err := store.Load(context.Background(), c.Namespace(), "raw")
	require.NoError(t, err)
	assert.NotContains(t, string(rec.Result), "SECRET")

	req = order("snippet")
	req.Source = token
	_, err = c.Charge(context.Background(), req)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "tokn_CARD", "no part of the token before the cut")
	assert.Contains(t, err.Error(), "[redacted]")
}
