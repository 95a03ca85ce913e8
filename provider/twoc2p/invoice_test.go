package twoc2p_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tc2pInvoiceStub answers each Payment Inquiry with the body given for its
// invoiceNo (2002 for any other) and records the invoice numbers asked.
func tc2pInvoiceStub(t *testing.T, bodies map[string]string) (*httptest.Server, *[]string) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		claims := jwt.MapClaims{}
		token := strings.TrimSuffix(strings.TrimPrefix(string(raw), `{"payload":"`), `"}`)
		_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(tc2pSecret.Reveal()), nil },
			jwt.WithValidMethods([]string{"HS256"}))
		require.NoError(t, err)
		inv, _ := claims["invoiceNo"].(string)
		asked = append(asked, inv)
		body, ok := bodies[inv]
		if !ok {
			body = tc2pPlain("2002")
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

// An intent ID too long for a readable invoiceNo gets the hashed form,
// which another intent could share: an answer settles it only when it
// echoes this intent's own key.
func TestHashedInvoiceSettlesOnlyWithTheIntentsKey(t *testing.T) {
	id := strings.Repeat("order-", 10) + "1"
	inv, err := idempay.TwoC2PInvoiceNo(id, false)
	require.NoError(t, err)
	require.True(t, idempay.TwoC2PInvoiceNoIsHashed(inv))
	rec := idempay.Record{Namespace: tc2pNS, ID: id, Key: "key-1"}
	for _, tc := range []struct {
		name string
		body string
		kind idempay.Kind
	}{
		{"paid, key echoed", tc2pSigned("0000", `"invoiceNo":"`+inv+`","idempotencyID":"key-1"`), idempay.KindSucceeded},
		{"paid, no key echoed", tc2pSigned("0000", `"invoiceNo":"`+inv+`"`), idempay.KindUnknown},
		{"declined, no key echoed", tc2pSigned("4005", `"invoiceNo":"`+inv+`"`), idempay.KindUnknown},
		{"pending, no key echoed", tc2pSigned("0001", `"invoiceNo":"`+inv+`"`), idempay.KindUnknown},
		{"another intent's key", tc2pSigned("0000", `"invoiceNo":"`+inv+`","idempotencyID":"key-2"`), idempay.KindKeyConflict},
		{"not found", tc2pPlain("2002"), idempay.KindNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := tc2pInvoiceStub(t, map[string]string{inv: tc.body})
			v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
			require.NoError(t, err)
			assert.Equal(t, tc.kind, v.Kind)
		})
	}
}

// An intent sent by an earlier idempay version went out under the earlier
// spelling of its invoiceNo ("order-1" as order1box6eikw2juyyfb3). When
// 2C2P does not know the current spelling, that one is asked too, and
// settles the intent only by echoing its key: the earlier mapping gave that
// invoiceNo to the intent ID "order1box6eikw2juyyfb3" as well.
func TestLegacyInvoiceNoIsAskedBeforeAResend(t *testing.T) {
	rec := idempay.Record{Namespace: tc2pNS, ID: "order-1", Key: "key-1"}
	current, _ := idempay.TwoC2PInvoiceNo("order-1", false)
	const legacy = "order1box6eikw2juyyfb3"
	for _, tc := range []struct {
		name   string
		bodies map[string]string
		kind   idempay.Kind
	}{
		{"paid under the old spelling, key echoed",
			map[string]string{legacy: tc2pSigned("0000", `"invoiceNo":"`+legacy+`","idempotencyID":"key-1"`)}, idempay.KindSucceeded},
		{"paid under the old spelling, no key: maybe another intent's",
			map[string]string{legacy: tc2pSigned("0000", `"invoiceNo":"`+legacy+`"`)}, idempay.KindUnknown},
		{"neither spelling known: safe to send", map[string]string{}, idempay.KindNotFound},
		{"the current spelling answers first",
			map[string]string{current: tc2pSigned("0001", `"invoiceNo":"`+current+`"`)}, idempay.KindPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, asked := tc2pInvoiceStub(t, tc.bodies)
			v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
			require.NoError(t, err)
			assert.Equal(t, tc.kind, v.Kind)
			assert.Equal(t, current, (*asked)[0], "the current spelling first")
		})
	}
	srv, asked := tc2pInvoiceStub(t, nil)
	p := tc2pAdapter
	p.NoLegacyInvoiceNo = true
	v, err := p.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind)
	assert.Equal(t, []string{current}, *asked)

	// An ID whose spelling did not change is asked once.
	srv, asked = tc2pInvoiceStub(t, nil)
	_, err = tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL),
		idempay.Record{Namespace: tc2pNS, ID: "ORDER1", Key: "key-1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ORDER1"}, *asked)
}

// FindCharge asks about the invoice of the record's attempt, and only that
// one: attempt 1's answer (a decline, under attempt 1's key) is never taken
// for attempt 2's, and an answer about attempt 2's invoice that echoes
// another key is a key conflict.
func TestFindChargeAsksForTheRecordsAttempt(t *testing.T) {
	const id = "order-1" // its attempt 1 has a legacy spelling too, which a later attempt never asks about
	inv1, _ := idempay.TwoC2PInvoiceNo(id, false)
	inv2, err := idempay.TwoC2PAttemptInvoiceNo(id, 2, false)
	require.NoError(t, err)
	require.NotEqual(t, inv1, inv2)
	declined1 := tc2pSigned("4051", `"invoiceNo":"`+inv1+`","idempotencyID":"key-1"`)
	for _, tc := range []struct {
		name   string
		bodies map[string]string
		kind   idempay.Kind
	}{
		{"attempt 1 declined, attempt 2 unknown to 2C2P: safe to send", map[string]string{inv1: declined1}, idempay.KindNotFound},
		{"attempt 2 pending", map[string]string{inv1: declined1,
			inv2: tc2pSigned("0001", `"invoiceNo":"`+inv2+`","idempotencyID":"key-2"`)}, idempay.KindPending},
		{"attempt 2 paid", map[string]string{inv1: declined1,
			inv2: tc2pSigned("0000", `"invoiceNo":"`+inv2+`","idempotencyID":"key-2"`)}, idempay.KindSucceeded},
		{"attempt 2 paid, no key echoed", map[string]string{inv2: tc2pSigned("0000", `"invoiceNo":"`+inv2+`"`)}, idempay.KindSucceeded},
		{"attempt 2's invoice under attempt 1's key", map[string]string{
			inv2: tc2pSigned("0000", `"invoiceNo":"`+inv2+`","idempotencyID":"key-1"`)}, idempay.KindKeyConflict},
		{"an answer about attempt 1's invoice", map[string]string{inv2: declined1}, idempay.KindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, asked := tc2pInvoiceStub(t, tc.bodies)
			rec := idempay.Record{Namespace: tc2pNS, ID: id, Attempt: 2, Key: "key-2"}
			v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
			require.NoError(t, err)
			assert.Equal(t, tc.kind, v.Kind)
			assert.Equal(t, []string{inv2}, *asked, "attempt 2's invoice only")
			if v.Charge != nil {
				assert.Equal(t, "key-2", v.Charge.Key)
			}
		})
	}

	// A record written before attempts existed (Attempt 0) is attempt 1.
	srv, asked := tc2pInvoiceStub(t, map[string]string{inv1: declined1})
	v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL),
		idempay.Record{Namespace: tc2pNS, ID: id, Key: "key-1"})
	require.NoError(t, err)
	assert.Equal(t, idempay.KindDeclined, v.Kind)
	assert.Equal(t, []string{inv1}, *asked)
}

// A hashed attempt's invoice, like form 4 of attempt 1, settles only from
// an answer echoing the attempt's own key.
func TestFindChargeHashedAttemptNeedsItsKey(t *testing.T) {
	id := strings.Repeat("order-", 10) + "1"
	inv, err := idempay.TwoC2PAttemptInvoiceNo(id, 3, false)
	require.NoError(t, err)
	require.True(t, idempay.TwoC2PInvoiceNoIsHashed(inv))
	rec := idempay.Record{Namespace: tc2pNS, ID: id, Attempt: 3, Key: "key-3"}
	for body, kind := range map[string]idempay.Kind{
		tc2pSigned("0000", `"invoiceNo":"`+inv+`","idempotencyID":"key-3"`): idempay.KindSucceeded,
		tc2pSigned("0000", `"invoiceNo":"`+inv+`"`):                         idempay.KindUnknown,
		tc2pSigned("4051", `"invoiceNo":"`+inv+`"`):                         idempay.KindUnknown,
	} {
		srv, asked := tc2pInvoiceStub(t, map[string]string{inv: body})
		v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
		require.NoError(t, err)
		assert.Equal(t, kind, v.Kind, body)
		assert.Equal(t, []string{inv}, *asked)
	}
}

// With a QR channel (20 characters), an attempt whose invoiceNo does not
// fit is refused when its request is built: a *ValidationError (field
// Attempt), outcome failed, and nothing sent under it.
func TestTwoC2PAttemptBeyondTheQRLimitIsRefusedBeforeSending(t *testing.T) {
	const id = "order-2024-000123-ab" // hashed with a QR channel: attempts 2 to 9 fit, 10 does not
	store := memstore.New()
	srv, url := tc2pServe(t, tc2pFake{}, store, func(string) string { return id })
	c := tc2pClient(t, url, store, func(cfg *idempay.Config) {
		cfg.Provider = twoc2p.Provider{MerchantID: tc2pMerchant, PaymentChannel: []string{"THQR"}}
	})
	ctx := context.Background()
	req := func(n int) idempay.ChargeRequest {
		r := tc2pOrder(id)
		r.Extra = map[string]string{"userDefined1": fmt.Sprint("card-", n)}
		return r
	}
	for n := 1; n <= 9; n++ {
		ch, err := c.Charge(ctx, req(n))
		requirePending(t, ch, err, "attempt %d", n)
		inv, err := idempay.TwoC2PAttemptInvoiceNo(id, n, true)
		require.NoError(t, err)
		require.LessOrEqual(t, len(inv), 20)
		require.NoError(t, srv.Decline(inv, "4051"), "attempt %d", n)
		_, err = c.Charge(ctx, req(n))
		require.ErrorIs(t, err, idempay.ErrDeclined, "attempt %d", n)
	}
	require.Equal(t, 9, srv.Len(), "nine attempts, nine invoices")
	before := srv.Stats().Token.Requests

	_, err := c.Charge(ctx, req(10))
	var ve *idempay.ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Equal(t, "Attempt", ve.Field)
	assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	assert.Equal(t, idempay.OutcomeFailed, idempay.OutcomeOf(err))
	assert.Equal(t, before, srv.Stats().Token.Requests, "nothing sent for attempt 10")
	rec, err := c.Record(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 10, rec.Attempt)
	assert.Equal(t, idempay.StateFailed, rec.State)
	assert.Zero(t, srv.Stats().Existing, "no invoice was reused")
	require.NoError(t, srv.CheckInvoices())
}
