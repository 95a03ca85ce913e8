package twoc2p_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tc2pAdapter is the adapter under test, its clock fixed at tc2pNow.
var tc2pAdapter = twoc2p.Provider{MerchantID: tc2pMerchant, Now: func() time.Time { return tc2pNow }}

func tc2pTarget(t *testing.T, raw string) idempay.Target {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return idempay.Target{BaseURL: u, Credentials: tc2pSecret}
}

// tc2pSigned is a signed answer with respCode code and extra claims.
func tc2pSigned(code, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return string(twoc2ptest.Body(tc2pHS256(`{"respCode":"` + code + `","respDesc":"d"` + extra + `}`)))
}

func tc2pPlain(code string) string { return `{"respCode":"` + code + `","respDesc":"d"}` }

// TestTwoC2PReadCharge is the respCode mapping of Payment Token answers.
func TestTwoC2PReadCharge(t *testing.T) {
	httpReq, err := tc2pAdapter.NewChargeRequest(context.Background(), tc2pTarget(t, "https://pgw.example"),
		tc2pOrder("ORDER1"), "key-1")
	require.NoError(t, err)
	assert.Equal(t, "https://pgw.example/payment/4.3/paymentToken", httpReq.URL.String())
	assert.Empty(t, httpReq.Header.Get("Authorization"), "2C2P has no auth header: the JWT is the credential")

	tokenOK := tc2pSigned("0000", `"paymentToken":"tok123","webPaymentUrl":"https://pay.example/tok123"`)
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   idempay.Kind
		code   string
	}{
		{"token issued", 200, tokenOK, idempay.KindPending, ""},
		{"pending", 200, tc2pSigned("0001", ""), idempay.KindPending, ""},
		{"in progress", 200, tc2pSigned("2001", ""), idempay.KindPending, ""},
		{"existing invoice, signed", 200, tc2pSigned("9015", ""), idempay.KindUnknown, "9015"},
		{"existing invoice, plain", 200, tc2pPlain("9015"), idempay.KindUnknown, "9015"},
		{"tokenised", 200, tc2pSigned("4200", ""), idempay.KindUnknown, "4200"},
		{"token already used", 200, tc2pPlain("9041"), idempay.KindUnknown, "9041"},
		{"invalid value", 200, tc2pPlain("9004"), idempay.KindInvalid, "9004"},
		{"missing field", 200, tc2pSigned("9005", ""), idempay.KindInvalid, "9005"},
		{"too long", 200, tc2pPlain("9006"), idempay.KindInvalid, "9006"},
		{"invalid amount", 200, tc2pPlain("9009"), idempay.KindInvalid, "9009"},
		{"invalid currency", 200, tc2pPlain("9010"), idempay.KindInvalid, "9010"},
		{"invalid token", 200, tc2pPlain("9040"), idempay.KindInvalid, "9040"},
		{"invalid merchant", 200, tc2pPlain("9007"), idempay.KindConfig, "9007"},
		{"hash mismatch", 200, tc2pPlain("9042"), idempay.KindConfig, "9042"},
		{"internal 9990", 200, tc2pPlain("9990"), idempay.KindServerError, "9990"},
		{"internal 9999", 200, tc2pSigned("9999", ""), idempay.KindServerError, "9999"},
		{"9989 is not internal", 200, tc2pPlain("9989"), idempay.KindUnknown, "9989"},
		{"unknown code", 200, tc2pPlain("1234"), idempay.KindUnknown, "1234"},
		{"unsigned success", 200, `{"respCode":"0000","paymentToken":"tok"}`, idempay.KindUnknown, "unsigned"},
		{"success under another key", 200, string(twoc2ptest.Body(twoc2ptest.Forge(`{"alg":"HS256","typ":"JWT"}`, `{"respCode":"0000"}`, []byte("other"), sha256.New))), idempay.KindUnknown, "bad_signature"},
		{"success with alg none", 200, string(twoc2ptest.Body(twoc2ptest.Forge(`{"alg":"none"}`, `{"respCode":"0000"}`, nil, nil))), idempay.KindUnknown, "bad_signature"},
		{"expired success", 200, tc2pSigned("0000", `"exp":1000`), idempay.KindUnknown, "bad_signature"},
		{"garbage", 200, `<html>ok</html>`, idempay.KindUnknown, "malformed"},
		{"empty", 200, ``, idempay.KindUnknown, "malformed"},
		{"503", 503, `<html>busy</html>`, idempay.KindServerError, ""},
		{"500 with 9999", 500, tc2pPlain("9999"), idempay.KindServerError, "9999"},
		{"502 whatever it says", 502, tokenOK, idempay.KindServerError, "0000"},
		{"400 with a respCode", 400, tc2pPlain("9015"), idempay.KindUnknown, "9015"},
		{"400 without", 400, `bad`, idempay.KindInvalid, ""},
		{"401", 401, ``, idempay.KindConfig, ""},
		{"404", 404, `not found`, idempay.KindConfig, ""},
		{"302", 302, ``, idempay.KindUnknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc2pAdapter.ReadCharge(&http.Response{StatusCode: tc.status, Request: httpReq}, []byte(tc.body))
			assert.Equal(t, tc.kind, v.Kind)
			if tc.kind == idempay.KindPending {
				require.NotNil(t, v.Charge)
				assert.Equal(t, idempay.StatePending, v.Charge.State)
				assert.EqualValues(t, 123456, v.Charge.Amount)
				assert.Equal(t, "THB", v.Charge.Currency)
				return
			}
			assert.Nil(t, v.Charge, "only a pending verdict carries a charge")
			require.NotNil(t, v.Err)
			assert.Equal(t, tc.code, v.Err.Code)
			assert.NotContains(t, v.Err.Message, tc2pSecret.Reveal())
		})
	}

	v := tc2pAdapter.ReadCharge(&http.Response{StatusCode: 200, Request: httpReq}, []byte(tokenOK))
	assert.Equal(t, &idempay.Charge{ID: "tok123", Status: "0000", State: idempay.StatePending, Amount: 123456,
		Currency: "THB", AuthorizeURL: "https://pay.example/tok123"}, v.Charge)
	v = tc2pAdapter.ReadCharge(&http.Response{StatusCode: 200, Request: httpReq}, []byte(tc2pSigned("0001", "")))
	assert.Equal(t, "ORDER1", v.Charge.ID, "without a token the invoice names the charge")

	// An answer to a request the adapter did not build cannot be verified.
	v = tc2pAdapter.ReadCharge(&http.Response{StatusCode: 200, Request: httptest.NewRequest("POST", "/", nil)}, []byte(tokenOK))
	assert.Equal(t, idempay.KindUnknown, v.Kind)
	v = tc2pAdapter.ReadCharge(&http.Response{StatusCode: 200}, []byte(tokenOK))
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}

// tc2pInquiryStub answers every Payment Inquiry with status and body,
// after checking the request is a signed inquiry for wantInvoice.
func tc2pInquiryStub(t *testing.T, wantInvoice string, status int, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/payment/4.3/paymentInquiry", r.URL.Path)
		raw, _ := io.ReadAll(r.Body)
		var req struct{ Payload string }
		_ = json.Unmarshal(raw, &req)
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(req.Payload, claims, func(*jwt.Token) (any, error) { return []byte(tc2pSecret.Reveal()), nil },
			jwt.WithValidMethods([]string{"HS256"}))
		assert.NoError(t, err, "the inquiry is signed with the merchant secret")
		assert.Equal(t, tc2pMerchant, claims["merchantID"])
		assert.Equal(t, wantInvoice, claims["invoiceNo"])
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTwoC2PFindCharge is the respCode mapping of Payment Inquiry answers.
func TestTwoC2PFindCharge(t *testing.T) {
	const inv = "ORDER1"
	rec := idempay.Record{Namespace: tc2pNS, ID: inv, Key: "key-1"}
	paid := `"invoiceNo":"ORDER1","merchantID":"JT01","amount":1234.56,"currencyCode":"THB","tranRef":"T42","idempotencyID":"key-1"`
	for _, tc := range []struct {
		name   string
		a      twoc2p.Provider
		status int
		body   string
		kind   idempay.Kind
	}{
		{"paid", tc2pAdapter, 200, tc2pSigned("0000", paid), idempay.KindSucceeded},
		{"paid, only the invoice echoed", tc2pAdapter, 200, tc2pSigned("0000", `"invoiceNo":"ORDER1"`), idempay.KindSucceeded},
		{"paid, no invoice named", tc2pAdapter, 200, tc2pSigned("0000", `"tranRef":"T42"`), idempay.KindUnknown},
		{"a Payment Token answer", tc2pAdapter, 200, tc2pSigned("0000", `"paymentToken":"tok","webPaymentUrl":"https://pay.example/tok"`), idempay.KindUnknown},
		{"declined, no invoice named", tc2pAdapter, 200, tc2pSigned("4005", ""), idempay.KindUnknown},
		{"pending", tc2pAdapter, 200, tc2pSigned("0001", `"invoiceNo":"ORDER1"`), idempay.KindPending},
		{"in progress", tc2pAdapter, 200, tc2pSigned("2001", `"invoiceNo":"ORDER1"`), idempay.KindPending},
		{"not found, signed", tc2pAdapter, 200, tc2pSigned("2002", `"invoiceNo":"ORDER1"`), idempay.KindNotFound},
		{"not found, plain", tc2pAdapter, 200, tc2pPlain("2002"), idempay.KindNotFound},
		{"declined", tc2pAdapter, 200, tc2pSigned("4005", `"invoiceNo":"ORDER1"`), idempay.KindDeclined},
		{"declined, insufficient funds", tc2pAdapter, 200, tc2pSigned("4051", `"invoiceNo":"ORDER1"`), idempay.KindDeclined},
		{"decline code unsigned", tc2pAdapter, 200, tc2pPlain("4005"), idempay.KindUnknown},
		{"ISO approval code 4008", tc2pAdapter, 200, tc2pSigned("4008", ""), idempay.KindUnknown},
		{"ISO in progress 4009", tc2pAdapter, 200, tc2pSigned("4009", ""), idempay.KindUnknown},
		{"tokenised", tc2pAdapter, 200, tc2pSigned("4200", ""), idempay.KindUnknown},
		{"cancelled, no invoice named", tc2pAdapter, 200, tc2pSigned("0003", ""), idempay.KindUnknown},
		{"cancelled", tc2pAdapter, 200, tc2pSigned("0003", `"invoiceNo":"ORDER1"`), idempay.KindDeclined},
		{"soft-declined", tc2pAdapter, 200, tc2pSigned("0004", `"invoiceNo":"ORDER1"`), idempay.KindDeclined},
		{"completed partially", tc2pAdapter, 200, tc2pSigned("4032", `"invoiceNo":"ORDER1"`), idempay.KindUnknown},
		{"settlement success", tc2pAdapter, 200, tc2pSigned("4045", `"invoiceNo":"ORDER1"`), idempay.KindUnknown},
		{"duplicate transmission", tc2pAdapter, 200, tc2pSigned("4094", `"invoiceNo":"ORDER1"`), idempay.KindUnknown},
		{"cancel fail", tc2pAdapter, 200, tc2pSigned("4048", `"invoiceNo":"ORDER1"`), idempay.KindUnknown},
		{"internal", tc2pAdapter, 200, tc2pPlain("9999"), idempay.KindUnknown},
		{"unsigned success", tc2pAdapter, 200, `{"respCode":"0000","tranRef":"T"}`, idempay.KindUnknown},
		{"another invoice", tc2pAdapter, 200, tc2pSigned("0000", `"invoiceNo":"ORDER2"`), idempay.KindUnknown},
		{"another invoice, not found", tc2pAdapter, 200, tc2pSigned("2002", `"invoiceNo":"ORDER2"`), idempay.KindUnknown},
		{"another merchant", tc2pAdapter, 200, tc2pSigned("0000", `"merchantID":"JT02"`), idempay.KindUnknown},
		{"another key", tc2pAdapter, 200, tc2pSigned("0000", `"invoiceNo":"ORDER1","idempotencyID":"key-2"`), idempay.KindKeyConflict},
		{"wrong signature", tc2pAdapter, 200, string(twoc2ptest.Body(twoc2ptest.Forge(`{"alg":"HS256"}`, `{"respCode":"0000"}`, []byte("x"), sha256.New))), idempay.KindUnknown},
		{"expired", tc2pAdapter, 200, tc2pSigned("0000", `"exp":1000`), idempay.KindUnknown},
		{"503", tc2pAdapter, 503, ``, idempay.KindUnknown},
		{"500", tc2pAdapter, 500, tc2pPlain("9999"), idempay.KindUnknown},
		{"404", tc2pAdapter, 404, `nope`, idempay.KindUnknown},
		{"502 saying paid", tc2pAdapter, 502, tc2pSigned("0000", paid), idempay.KindUnknown},
		{"garbage", tc2pAdapter, 200, `{"ok":true}`, idempay.KindUnknown},
		{"custom decline codes", twoc2p.Provider{MerchantID: tc2pMerchant, IsDecline: func(c string) bool { return c == "4006" }},
			200, tc2pSigned("4006", `"invoiceNo":"ORDER1"`), idempay.KindDeclined},
		{"custom decline codes replace the default", twoc2p.Provider{MerchantID: tc2pMerchant, IsDecline: func(c string) bool { return c == "4006" }},
			200, tc2pSigned("4005", `"invoiceNo":"ORDER1"`), idempay.KindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc2pInquiryStub(t, inv, tc.status, tc.body)
			v, err := tc.a.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
			require.NoError(t, err, "every answer is a verdict")
			assert.Equal(t, tc.kind, v.Kind)
			switch tc.kind {
			case idempay.KindSucceeded, idempay.KindPending:
				require.NotNil(t, v.Charge)
				assert.True(t, v.Replayed, "a charge found is an earlier one")
			case idempay.KindDeclined:
				require.NotNil(t, v.Err)
				assert.NotEmpty(t, v.Err.DeclineCode)
				assert.True(t, v.Replayed)
			default:
				assert.Nil(t, v.Charge)
				assert.False(t, v.Replayed)
			}
		})
	}

	srv := tc2pInquiryStub(t, inv, 200, tc2pSigned("0000", paid))
	v, err := tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
	require.NoError(t, err)
	assert.Equal(t, &idempay.Charge{IntentID: "ORDER1", Key: "key-1", ID: "T42", Status: "0000", State: idempay.StateSucceeded,
		Amount: 123456, Currency: "THB"}, v.Charge)

	srv = tc2pInquiryStub(t, inv, 200, tc2pSigned("0001", `"invoiceNo":"ORDER1","amount":"1,234.56","currencyCode":"THB"`))
	v, err = tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindPending, v.Kind, "an unreadable amount does not change the outcome")
	assert.Equal(t, "ORDER1", v.Charge.ID)
	assert.Zero(t, v.Charge.Amount)

	// The invoiceNo of an encoded intent ID is what is asked for.
	encodedRec := rec
	encodedRec.ID = "order-1"
	encodedInv, _ := idempay.TwoC2PInvoiceNo("order-1", false)
	srv = tc2pInquiryStub(t, encodedInv, 200, tc2pPlain("2002"))
	noLegacy := tc2pAdapter
	noLegacy.NoLegacyInvoiceNo = true
	v, err = noLegacy.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), encodedRec)
	require.NoError(t, err)
	assert.Equal(t, idempay.KindNotFound, v.Kind)

	// No answer at all is an error (the Client keeps the outcome unknown).
	srv.Close()
	_, err = tc2pAdapter.FindCharge(context.Background(), srv.Client(), tc2pTarget(t, srv.URL), rec)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tc2pSecret.Reveal())

	// No secret: nothing is sent.
	_, err = tc2pAdapter.FindCharge(context.Background(), http.DefaultClient,
		idempay.Target{BaseURL: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}, rec)
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
}

func TestTwoC2PValidate(t *testing.T) {
	ok := tc2pOrder("ORDER1")
	require.NoError(t, tc2pAdapter.Validate(ok))
	withExtra := ok
	withExtra.Extra = map[string]string{"userDefined1": "cart-1", "userDefined5": "x"}
	require.NoError(t, tc2pAdapter.Validate(withExtra))
	uuidQR := ok
	uuidQR.IntentID = "3f2c9a1e-7b4d-4e8a-9c1f-2a6b8d0e4f17"
	require.NoError(t, twoc2p.Provider{MerchantID: tc2pMerchant, PaymentChannel: []string{"PPQR"}}.Validate(uuidQR),
		"a UUID intent is hashed to fit a QR channel")

	for _, tc := range []struct {
		field string
		a     twoc2p.Provider
		mod   func(*idempay.ChargeRequest)
	}{
		{"Source", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Source = "tokn_x" }},
		{"Customer", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Customer = "cust_1" }},
		{"Metadata", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Metadata = map[string]string{"a": "b"} }},
		{"Extra", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"userDefined6": "x"} }},
		{"Extra", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"invoiceNo": "x"} }},
		{"UserDefined2", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Extra = map[string]string{"userDefined2": strings.Repeat("x", 151)} }},
		{"IdempotencyID", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Key = strings.Repeat("k", 101) }},
		{"Description", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Description = strings.Repeat("d", 251) }},
		{"FrontendReturnURL", tc2pAdapter, func(r *idempay.ChargeRequest) { r.ReturnURL = "not a url" }},
		{"Currency", tc2pAdapter, func(r *idempay.ChargeRequest) { r.Currency = "ZZZ" }},
		{"MerchantID", twoc2p.Provider{}, func(*idempay.ChargeRequest) {}},
		{"PaymentChannel", twoc2p.Provider{MerchantID: tc2pMerchant, PaymentChannel: []string{"C-C"}}, func(*idempay.ChargeRequest) {}},
		{"Request3DS", twoc2p.Provider{MerchantID: tc2pMerchant, Request3DS: "yes"}, func(*idempay.ChargeRequest) {}},
		{"BackendReturnURL", twoc2p.Provider{MerchantID: tc2pMerchant, BackendReturnURL: "/notify"}, func(*idempay.ChargeRequest) {}},
	} {
		r := ok
		tc.mod(&r)
		err := tc.a.Validate(r)
		var ve *idempay.ValidationError
		if assert.ErrorAs(t, err, &ve, tc.field) {
			assert.Equal(t, tc.field, ve.Field)
		}
	}
}
