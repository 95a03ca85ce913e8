package twoc2p_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
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
	rec := idempay.Record{Namespace: tc2pNS, IntentID: id, Key: "key-1"}
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
	rec := idempay.Record{Namespace: tc2pNS, IntentID: "order-1", Key: "key-1"}
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
		idempay.Record{Namespace: tc2pNS, IntentID: "ORDER1", Key: "key-1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ORDER1"}, *asked)
}
