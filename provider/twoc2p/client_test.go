package twoc2p_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The end-to-end tests charge through a Client against the fake gateway.
// Every request the fake receives is checked against the store (the intent
// reserved, its key the idempotencyID) before it is served.

func TestTwoC2PChargeOpensPaymentThenSettlesByInquiry(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	c := tc2pClient(t, url, store)
	ctx := context.Background()

	ch, err := c.Charge(ctx, tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	assert.Equal(t, idempay.StatePending, ch.State, "a payment token is not a payment")
	assert.False(t, ch.Replayed)
	assert.Equal(t, 1, ch.Requests)
	txn, ok := srv.Transaction("ORDER1")
	require.True(t, ok)
	assert.Equal(t, txn.PaymentToken, ch.ID)
	assert.Equal(t, twoc2ptest.DefaultWebPaymentBase+txn.PaymentToken, ch.AuthorizeURL)
	assert.Equal(t, ch.Key, txn.IdempotencyID, "the intent's key travels as idempotencyID")
	assert.Equal(t, "1234.56", txn.Amount)
	assert.Equal(t, "THB", txn.CurrencyCode)
	rec, err := c.Record(ctx, "ORDER1")
	require.NoError(t, err)
	assert.Equal(t, idempay.StatePending, rec.State)

	// Not paid yet: charging again asks Payment Inquiry, sends no token request.
	ch, err = c.Charge(ctx, tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)

	// The customer pays; the next Charge learns it from the inquiry.
	require.NoError(t, srv.Pay("ORDER1"))
	ch, err = c.Charge(ctx, tc2pOrder("ORDER1"))
	require.NoError(t, err)
	txn, _ = srv.Transaction("ORDER1")
	assert.Equal(t, idempay.StateSucceeded, ch.State)
	assert.Equal(t, txn.TranRef, ch.ID)
	assert.EqualValues(t, 123456, ch.Amount)
	assert.Equal(t, "THB", ch.Currency)
	assert.True(t, ch.Replayed)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 0, ch.Requests)

	// Settled: answered from the store, nothing sent.
	before := srv.Stats()
	ch, err = c.Charge(ctx, tc2pOrder("ORDER1"))
	require.NoError(t, err)
	assert.Equal(t, idempay.ReplayFromStore, ch.ReplayedFrom)
	assert.Equal(t, before, srv.Stats())
	assert.Equal(t, 1, srv.Stats().Token.Requests)
	assert.Equal(t, 1, srv.Len())
	require.NoError(t, srv.CheckInvoices())
}

// TestTwoC2PLostAnswers covers each fault of a first token request: the
// Client asks Payment Inquiry before anything is resent, never provokes a
// 9015, and opens exactly one transaction.
func TestTwoC2PLostAnswers(t *testing.T) {
	for _, tc := range []struct {
		fault         fakes.Fault
		tokenRequests int
		from          idempay.ReplaySource // "" for a fresh answer
		state         twoc2ptest.State
	}{
		{fakes.Pre, 2, "", twoc2ptest.AwaitingPayment},         // not found -> resent -> answered
		{fakes.Unavailable, 2, "", twoc2ptest.AwaitingPayment}, // the same after a 503
		{fakes.Internal, 2, "", twoc2ptest.AwaitingPayment},    // and after a 500 9999
		{fakes.Mid, 1, idempay.ReplayFromLookup, twoc2ptest.InProgress},
		{fakes.Post, 1, idempay.ReplayFromLookup, twoc2ptest.AwaitingPayment},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			store := memstore.New()
			srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
			srv.Fail("ORDER1", tc.fault)
			c := tc2pClient(t, url, store)
			ch, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
			requirePending(t, ch, err)
			assert.Equal(t, idempay.StatePending, ch.State)
			assert.Equal(t, tc.from, ch.ReplayedFrom)
			st := srv.Stats()
			assert.Equal(t, tc.tokenRequests, st.Token.Requests)
			assert.Equal(t, 1, st.Inquiry.Requests, "one inquiry before the resend decision")
			assert.Zero(t, st.Existing, "no resend ever met an existing invoice")
			assert.Equal(t, 1, srv.Len())
			txn, _ := srv.Transaction("ORDER1")
			assert.Equal(t, tc.state, txn.State)
			if tc.from == idempay.ReplayFromLookup {
				assert.Equal(t, "ORDER1", ch.ID, "the lost token cannot be recovered: the invoice names the charge")
				assert.Empty(t, ch.AuthorizeURL)
			} else {
				assert.Equal(t, txn.PaymentToken, ch.ID)
			}
		})
	}
}

// TestTwoC2PUnansweredInquiryLeavesUnknown: a lost token answer and a
// failed inquiry leave the outcome unknown, the key kept; the next Charge
// asks again before anything is resent.
func TestTwoC2PUnansweredInquiryLeavesUnknown(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	srv.Fail("ORDER1", fakes.Post)
	srv.FailInquiry("ORDER1", fakes.Unavailable)
	c := tc2pClient(t, url, store)

	_, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
	require.Error(t, err)
	assert.ErrorIs(t, err, idempay.ErrOutcomeUnknown)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	rec, lerr := c.Record(context.Background(), "ORDER1")
	require.NoError(t, lerr)
	assert.Equal(t, idempay.StateOpen, rec.State, "the key is kept")

	ch, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, rec.Key, ch.Key)
	st := srv.Stats()
	assert.Equal(t, 1, st.Token.Requests, "never resent")
	assert.Equal(t, 2, st.Inquiry.Requests)
	assert.Zero(t, st.Existing)
}

// TestTwoC2PExistingInvoiceIsSettledByInquiry: a 9015 is never a failure.
// Here the store lost the intent, and the caller re-sends it with the key it
// persisted itself: 2C2P refuses the invoice, the inquiry finds it.
func TestTwoC2PExistingInvoiceIsSettledByInquiry(t *testing.T) {
	srv, url := tc2pServe(t, tc2pFake{}, nil, nil)
	req := tc2pOrder("ORDER1")
	req.Key = "caller-key-1"
	ch, err := tc2pClient(t, url, memstore.New()).Charge(context.Background(), req)
	requirePending(t, ch, err)

	ch, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.Equal(t, idempay.StatePending, ch.State)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 1, ch.Requests)
	st := srv.Stats()
	assert.Equal(t, 1, st.Existing, "the second token request met 9015")
	assert.Equal(t, 1, srv.Len())

	// With plain error answers too.
	srv, url = tc2pServe(t, tc2pFake{opts: []twoc2ptest.Option{twoc2ptest.WithPlainErrors()}}, nil, nil)
	ch, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), req)
	requirePending(t, ch, err)
	ch, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), req)
	requirePending(t, ch, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 1, srv.Stats().Existing)
}

// TestTwoC2PInvoiceOfAnotherKeyIsUnknown: an invoice opened under another
// key (another intent mapping to the same invoiceNo, or a lost record with
// a new key) is never claimed as this intent's charge, nor called failed.
func TestTwoC2PInvoiceOfAnotherKeyIsUnknown(t *testing.T) {
	srv, url := tc2pServe(t, tc2pFake{}, nil, nil)
	ch, err := tc2pClient(t, url, memstore.New()).Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)

	_, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), tc2pOrder("ORDER1"))
	require.Error(t, err)
	assert.Equal(t, idempay.OutcomeUnknown, idempay.OutcomeOf(err))
	assert.ErrorIs(t, err, idempay.ErrKeyConflict)
	assert.Equal(t, 1, srv.Len())

	// Without the echo the inquiry cannot tell, and the found invoice
	// settles the intent: documented, and why the echo check exists.
	srv, url = tc2pServe(t, tc2pFake{opts: []twoc2ptest.Option{twoc2ptest.WithoutIdempotencyEcho()}}, nil, nil)
	ch, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	ch, err = tc2pClient(t, url, memstore.New()).Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom)
	assert.Equal(t, 1, srv.Len())
}

func TestTwoC2PDeclineIsFinal(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	c := tc2pClient(t, url, store)
	ch, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	require.NoError(t, srv.Decline("ORDER1", "4051"))

	for range 2 { // by inquiry, then from the store
		_, err = c.Charge(context.Background(), tc2pOrder("ORDER1"))
		require.Error(t, err)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
		assert.ErrorIs(t, err, idempay.ErrDeclined)
		var apiErr *idempay.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "4051", apiErr.DeclineCode)
		assert.Equal(t, http.StatusOK, apiErr.Status, "the inquiry's status, not 0")
		assert.Equal(t, "2c2p", apiErr.Provider)
	}
	rec, _ := c.Record(context.Background(), "ORDER1")
	assert.Equal(t, idempay.StateFailed, rec.State)
	assert.Equal(t, 1, srv.Stats().Inquiry.Requests, "the second answer came from the store")
}

// TestTwoC2PRefusals: answers that prove nothing was done end the charge
// as failed; nothing is resent.
func TestTwoC2PRefusals(t *testing.T) {
	t.Run("wrong secret", func(t *testing.T) {
		store := memstore.New()
		srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
		c := tc2pClient(t, url, store, func(cfg *idempay.Config) { cfg.Credentials = "not-the-merchant-secret" })
		_, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
		require.Error(t, err)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
		assert.ErrorIs(t, err, idempay.ErrConfig)
		assert.Contains(t, err.Error(), "9042")
		assert.NotContains(t, err.Error(), "not-the-merchant-secret")
		assert.Zero(t, srv.Len())
	})
	t.Run("unknown merchant", func(t *testing.T) {
		store := memstore.New()
		_, url := tc2pServe(t, tc2pFake{opts: []twoc2ptest.Option{twoc2ptest.WithMerchant("OTHER", tc2pSecret.Reveal())}}, store, tc2pSameInvoice)
		_, err := tc2pClient(t, url, store).Charge(context.Background(), tc2pOrder("ORDER1"))
		assert.ErrorIs(t, err, idempay.ErrConfig)
		assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	})
	t.Run("no secret configured", func(t *testing.T) {
		store := memstore.New()
		srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
		// New refuses it (TestNewRefusesTwoC2PMisconfiguration); a Target
		// built by hand is refused when the request is signed.
		_, err := idempay.New(idempay.Config{BaseURL: url, Store: store, Provider: twoc2p.Provider{MerchantID: tc2pMerchant}})
		require.ErrorIs(t, err, idempay.ErrConfig)
		u, _ := neturl.Parse(url)
		_, err = twoc2p.Provider{MerchantID: tc2pMerchant}.NewChargeRequest(context.Background(),
			idempay.Target{BaseURL: u, Namespace: tc2pNS}, tc2pOrder("ORDER1"), "k1")
		assert.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
		assert.Zero(t, srv.Stats().Token.Requests+srv.Stats().Rejected, "nothing was sent")
	})
	t.Run("bad input", func(t *testing.T) {
		store := memstore.New()
		srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
		req := tc2pOrder("ORDER1")
		req.Source = "tokn_test"
		_, err := tc2pClient(t, url, store).Charge(context.Background(), req)
		var ve *idempay.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "Source", ve.Field)
		_, lerr := store.Load(context.Background(), tc2pNS, "ORDER1")
		assert.ErrorIs(t, lerr, idempay.ErrNotFound, "refused before anything is stored")
		assert.Zero(t, srv.Stats().Token.Requests)
	})
}

// TestTwoC2PBadAnswerSignatureIsNeverSuccess: a token answer that does not
// verify is unknown, and the inquiry (properly signed) settles it.
func TestTwoC2PBadAnswerSignatureIsNeverSuccess(t *testing.T) {
	store := memstore.New()
	srv, _ := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	var tokenAnswers atomic.Int32
	// A proxy that re-signs token answers with another key.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != twoc2ptest.TokenPath {
			srv.ServeHTTP(w, r)
			return
		}
		tokenAnswers.Add(1)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		var body struct{ Payload string }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		parts := strings.Split(body.Payload, ".")
		forged := twoc2ptest.Forge(`{"alg":"HS256","typ":"JWT"}`, string(tc2pB64Decode(t, parts[1])), []byte("mitm-key"), sha256.New)
		_, _ = w.Write(twoc2ptest.Body(forged))
	}))
	t.Cleanup(proxy.Close)

	c := tc2pClient(t, proxy.URL, store)
	ch, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom, "settled by the inquiry, not by the forged answer")
	assert.Equal(t, "ORDER1", ch.ID)
	assert.EqualValues(t, 1, tokenAnswers.Load())
	assert.Equal(t, 1, srv.Len())
}

// TestTwoC2PHashedIntentIDs charges intents whose IDs are not invoice
// numbers (UUIDs, separators, non-ASCII) on a QR channel, end to end.
func TestTwoC2PHashedIntentIDs(t *testing.T) {
	ids := []string{"3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17", "order-2024/0001", "注文-1", strings.Repeat("x", 60)}
	intentOf := map[string]string{}
	for _, id := range ids {
		inv, err := idempay.TwoC2PInvoiceNo(id, true)
		require.NoError(t, err)
		intentOf[inv] = id
	}
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, func(inv string) string { return intentOf[inv] })
	c := tc2pClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = twoc2p.Provider{MerchantID: tc2pMerchant, PaymentChannel: []string{"PPQR"}}
	})
	for _, id := range ids {
		srv.Fail(tc2pInvoice(t, id, true), fakes.Post) // every answer lost: the inquiry must find each
		ch, err := c.Charge(context.Background(), tc2pOrder(id))
		requirePending(t, ch, err, id)
		assert.Equal(t, idempay.ReplayFromLookup, ch.ReplayedFrom, id)
		assert.Equal(t, tc2pInvoice(t, id, true), ch.ID)
	}
	assert.Equal(t, len(ids), srv.Len())
	require.NoError(t, srv.CheckInvoices())
}

// TestTwoC2PSecretNeverLeaks looks for the secret in everything a caller
// or a log can see.
func TestTwoC2PSecretNeverLeaks(t *testing.T) {
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, tc2pSameInvoice)
	srv.Fail("ORDER2", fakes.Post)
	srv.FailInquiry("ORDER2", fakes.Pre)
	var logs bytes.Buffer
	c := tc2pClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var seen []string
	ch, err := c.Charge(context.Background(), tc2pOrder("ORDER1"))
	requirePending(t, ch, err)
	raw, _ := json.Marshal(ch)
	seen = append(seen, string(raw))
	_, err = c.Charge(context.Background(), tc2pOrder("ORDER2"))
	require.Error(t, err)
	seen = append(seen, err.Error())
	for _, id := range []string{"ORDER1", "ORDER2"} {
		rec, _ := c.Record(context.Background(), id)
		seen = append(seen, string(rec.Result))
	}
	seen = append(seen, fmt.Sprintf("%v %+v %#v", idempay.TwoC2PSigner{Secret: tc2pSecret}, idempay.TwoC2PSigner{Secret: tc2pSecret}, tc2pSecret))
	require.NotEmpty(t, logs.String())
	seen = append(seen, logs.String())
	for _, s := range seen {
		assert.NotContains(t, s, tc2pSecret.Reveal())
	}
}

func tc2pInvoice(t *testing.T, id string, qr bool) string {
	inv, err := idempay.TwoC2PInvoiceNo(id, qr)
	require.NoError(t, err)
	return inv
}

func tc2pB64Decode(t *testing.T, s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}
