package twoc2ptest_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	merchant = "JT01"
	secret   = "fake-secret"
)

// gw is a fake gateway under test and a client for it, speaking JWT with
// golang-jwt directly.
type gw struct {
	t   *testing.T
	srv *twoc2ptest.Server
	url string
}

func start(t *testing.T, opts ...twoc2ptest.Option) *gw {
	t.Helper()
	srv := twoc2ptest.NewServer(append([]twoc2ptest.Option{twoc2ptest.WithMerchant(merchant, secret)}, opts...)...)
	t.Cleanup(srv.Close)
	return &gw{t: t, srv: srv, url: srv.URL}
}

func sign(t *testing.T, claims jwt.MapClaims, key string) []byte {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	require.NoError(t, err)
	b, _ := json.Marshal(map[string]string{"payload": tok})
	return b
}

// answer is what came back: a transport error, or a status and the
// answer's claims (verified if signed) with whether it was signed.
type answer struct {
	err    error
	status int
	signed bool
	claims map[string]any
}

func (g *gw) post(path string, body []byte) answer {
	g.t.Helper()
	resp, err := http.Post(g.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, claims: map[string]any{}}
	var outer map[string]any
	if json.Unmarshal(raw, &outer) != nil {
		return a
	}
	tok, ok := outer["payload"].(string)
	if !ok {
		a.claims = outer
		return a
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithJSONNumber())
	require.NoError(g.t, err, "answers are signed with the merchant secret")
	a.signed, a.claims = true, claims
	return a
}

func tokenReq(invoice string) jwt.MapClaims {
	return jwt.MapClaims{"merchantID": merchant, "invoiceNo": invoice, "description": "d",
		"amount": json.Number("1234.56"), "currencyCode": "THB", "paymentChannel": []string{"CC"},
		"idempotencyID": "key-" + invoice}
}

func (g *gw) token(c jwt.MapClaims) answer {
	return g.post(twoc2ptest.TokenPath, sign(g.t, c, secret))
}

func (g *gw) inquiry(invoice string) answer {
	return g.post(twoc2ptest.InquiryPath, sign(g.t, jwt.MapClaims{"merchantID": merchant, "invoiceNo": invoice}, secret))
}

func TestTokenAndInquiry(t *testing.T) {
	g := start(t)
	a := g.inquiry("INV1")
	assert.True(t, a.signed)
	assert.Equal(t, "2002", a.claims["respCode"])
	assert.Equal(t, "INV1", a.claims["invoiceNo"])

	a = g.token(tokenReq("INV1"))
	require.NoError(t, a.err)
	assert.True(t, a.signed)
	assert.Equal(t, "0000", a.claims["respCode"])
	tok, _ := a.claims["paymentToken"].(string)
	require.NotEmpty(t, tok)
	assert.Equal(t, twoc2ptest.DefaultWebPaymentBase+tok, a.claims["webPaymentUrl"])

	txn, ok := g.srv.Transaction("INV1")
	require.True(t, ok)
	assert.Equal(t, twoc2ptest.AwaitingPayment, txn.State)
	assert.True(t, txn.Answered)
	assert.Equal(t, "1234.56", txn.Amount)
	assert.Equal(t, "key-INV1", txn.IdempotencyID)

	a = g.inquiry("INV1")
	assert.Equal(t, "0001", a.claims["respCode"])
	assert.Equal(t, json.Number("1234.56"), a.claims["amount"], "the amount goes back as the number it came as")
	assert.Equal(t, "key-INV1", a.claims["idempotencyID"])

	require.NoError(t, g.srv.Pay("INV1"))
	a = g.inquiry("INV1")
	assert.Equal(t, "0000", a.claims["respCode"])
	assert.NotEmpty(t, a.claims["tranRef"])
	assert.NotEmpty(t, a.claims["approvalCode"])
	require.Error(t, g.srv.Pay("INV1"), "paid once")
	require.Error(t, g.srv.Decline("INV1", "4005"))

	// A repeated invoiceNo is refused, never replayed.
	a = g.token(tokenReq("INV1"))
	assert.True(t, a.signed)
	assert.Equal(t, "9015", a.claims["respCode"])
	assert.Nil(t, a.claims["paymentToken"])
	assert.Equal(t, 1, g.srv.Len())
	assert.Equal(t, 1, g.srv.Stats().Existing)

	g.token(tokenReq("INV2"))
	require.NoError(t, g.srv.Decline("INV2", "4051"))
	assert.Equal(t, "4051", g.inquiry("INV2").claims["respCode"])
	require.NoError(t, g.srv.CheckInvoices())
}

func TestRefusals(t *testing.T) {
	g := start(t)
	with := func(k string, v any) jwt.MapClaims {
		c := tokenReq("INV1")
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		claims jwt.MapClaims
		code   string
	}{
		{"no description", with("description", nil), "9005"},
		{"no currency", with("currencyCode", nil), "9005"},
		{"no channel", with("paymentChannel", []string{}), "9005"},
		{"no invoice", with("invoiceNo", nil), "9005"},
		{"invoice with a hyphen", with("invoiceNo", "INV-1"), "9004"},
		{"invoice too long", with("invoiceNo", strings.Repeat("1", 51)), "9006"},
		{"invoice too long for QR", func() jwt.MapClaims {
			c := with("invoiceNo", strings.Repeat("1", 21))
			c["paymentChannel"] = []string{"PPQR"}
			return c
		}(), "9006"},
		{"amount as a string", with("amount", "1234.56"), "9009"},
		{"amount zero", with("amount", json.Number("0.00")), "9009"},
		{"amount with three decimals", with("amount", json.Number("1.234")), "9009"},
		{"yen with decimals", func() jwt.MapClaims {
			c := with("amount", json.Number("1500.5"))
			c["currencyCode"] = "JPY"
			return c
		}(), "9009"},
		{"numeric currency", with("currencyCode", "764"), "9010"},
		{"lower-case currency", with("currencyCode", "thb"), "9010"},
	} {
		a := g.token(tc.claims)
		assert.True(t, a.signed, tc.name)
		assert.Equal(t, tc.code, a.claims["respCode"], tc.name)
	}
	assert.Zero(t, g.srv.Len())

	// Not verifiable: plain answers.
	a := g.post(twoc2ptest.TokenPath, sign(t, tokenReq("INV1"), "other-key"))
	assert.False(t, a.signed)
	assert.Equal(t, "9042", a.claims["respCode"])
	none := jwt.NewWithClaims(jwt.SigningMethodNone, tokenReq("INV1"))
	tok, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	a = g.post(twoc2ptest.TokenPath, []byte(`{"payload":"`+tok+`"}`))
	assert.Equal(t, "9042", a.claims["respCode"], "alg none is refused")
	a = g.post(twoc2ptest.TokenPath, []byte(`{}`))
	assert.Equal(t, "9042", a.claims["respCode"])
	c := tokenReq("INV1")
	c["merchantID"] = "OTHER"
	a = g.token(c)
	assert.False(t, a.signed)
	assert.Equal(t, "9007", a.claims["respCode"])
	assert.Equal(t, 4, g.srv.Stats().Rejected)

	// With PlainErrors every refusal is plain.
	p := start(t, twoc2ptest.WithPlainErrors())
	p.token(tokenReq("INV1"))
	a = p.token(tokenReq("INV1"))
	assert.False(t, a.signed)
	assert.Equal(t, "9015", a.claims["respCode"])
	a = p.inquiry("NOPE")
	assert.False(t, a.signed)
	assert.Equal(t, "2002", a.claims["respCode"])

	// Paths and methods.
	resp, err := http.Get(g.url + twoc2ptest.TokenPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = http.Post(g.url+"/payment/4.3/other", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestFaults(t *testing.T) {
	g := start(t, twoc2ptest.WithSettings(fakes.Settings{RetryAfter: 2 * time.Second}))
	g.srv.Fail("PRE", fakes.Pre)
	g.srv.Fail("UNAV", fakes.Unavailable)
	g.srv.Fail("INT", fakes.Internal)
	g.srv.Fail("MID", fakes.Mid)
	g.srv.Fail("POST", fakes.Post)

	assert.Error(t, g.token(tokenReq("PRE")).err)
	_, ok := g.srv.Transaction("PRE")
	assert.False(t, ok, "pre: nothing done")

	a := g.token(tokenReq("UNAV"))
	assert.Equal(t, http.StatusServiceUnavailable, a.status)
	_, ok = g.srv.Transaction("UNAV")
	assert.False(t, ok)

	a = g.token(tokenReq("INT"))
	assert.Equal(t, http.StatusInternalServerError, a.status)
	assert.Equal(t, "9999", a.claims["respCode"])
	_, ok = g.srv.Transaction("INT")
	assert.False(t, ok)

	assert.Error(t, g.token(tokenReq("MID")).err)
	txn, ok := g.srv.Transaction("MID")
	require.True(t, ok)
	assert.Equal(t, twoc2ptest.InProgress, txn.State)
	assert.False(t, txn.Answered)
	assert.Equal(t, "2001", g.inquiry("MID").claims["respCode"])

	assert.Error(t, g.token(tokenReq("POST")).err)
	txn, ok = g.srv.Transaction("POST")
	require.True(t, ok)
	assert.Equal(t, twoc2ptest.AwaitingPayment, txn.State)
	assert.False(t, txn.Answered)

	// A script is consumed one request at a time; the next goes through.
	assert.Equal(t, "0000", g.token(tokenReq("PRE")).claims["respCode"])

	g.srv.FailInquiry("POST", fakes.Post, fakes.Unavailable, fakes.None)
	assert.Error(t, g.inquiry("POST").err)
	assert.Equal(t, http.StatusServiceUnavailable, g.inquiry("POST").status)
	assert.Equal(t, "0001", g.inquiry("POST").claims["respCode"])

	st := g.srv.Stats()
	assert.Equal(t, 6, st.Token.Requests)
	assert.Equal(t, 2, st.Undelivered)
	assert.Equal(t, map[fakes.Fault]int{fakes.Pre: 1, fakes.Unavailable: 1, fakes.Internal: 1, fakes.Mid: 1, fakes.Post: 1}, st.Token.Faults)
	assert.Equal(t, map[fakes.Fault]int{fakes.Post: 1, fakes.Unavailable: 1}, st.Inquiry.Faults)
	assert.Equal(t, []string{"key-PRE"}, st.Token.Keys["PRE"], "distinct keys, each once")

	assert.Equal(t, 3, g.srv.PayAll(), "MID, POST and the PRE sent again")
}

// TestSeededRunsRepeat: the same seed and requests give the same faults
// and the same tokens.
func TestSeededRunsRepeat(t *testing.T) {
	run := func() ([]string, map[fakes.Fault]int) {
		g := start(t, twoc2ptest.WithFaultRates(fakes.Rates{Pre: 0.2, Post: 0.2}, 42))
		var toks []string
		for i := range 30 {
			inv := "INV" + string(rune('A'+i%26)) + string(rune('0'+i/26))
			a := g.token(tokenReq(inv))
			tok, _ := a.claims["paymentToken"].(string)
			toks = append(toks, tok)
		}
		return toks, g.srv.Stats().Token.Faults
	}
	t1, f1 := run()
	t2, f2 := run()
	assert.Equal(t, t1, t2)
	assert.Equal(t, f1, f2)
	assert.NotEmpty(t, f1)
}

func TestOnRequestSeesEveryVerifiedRequestFirst(t *testing.T) {
	var mu sync.Mutex
	var seen []twoc2ptest.RequestInfo
	g := start(t, twoc2ptest.WithHook(func(in twoc2ptest.RequestInfo) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in)
	}))
	g.srv.Fail("INV1", fakes.Pre)
	g.token(tokenReq("INV1"))
	g.inquiry("INV1")
	g.post(twoc2ptest.TokenPath, sign(t, tokenReq("INV2"), "other-key")) // not verified: not seen
	require.Len(t, seen, 2)
	assert.Equal(t, twoc2ptest.Token, seen[0].Endpoint)
	assert.Equal(t, "INV1", seen[0].InvoiceNo)
	assert.Equal(t, "key-INV1", seen[0].IdempotencyID)
	assert.Equal(t, merchant, seen[0].MerchantID)
	assert.Equal(t, twoc2ptest.Inquiry, seen[1].Endpoint)
}

// TestCheckFindsOneKeyOnTwoInvoices: what a client that re-derived the
// invoiceNo of an intent would leave behind.
func TestCheckFindsOneKeyOnTwoInvoices(t *testing.T) {
	g := start(t)
	a, b := tokenReq("INV1"), tokenReq("INV2")
	b["idempotencyID"] = a["idempotencyID"]
	g.token(a)
	g.token(b)
	var d *twoc2ptest.DuplicateError
	require.ErrorAs(t, g.srv.CheckInvoices(), &d)
	assert.Equal(t, []string{"key-INV1"}, d.Keys)
	assert.Equal(t, [][]string{{"INV1", "INV2"}}, d.Invoices)
}

func TestGatewayKeyGivenIsTheOneUsed(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	srv := twoc2ptest.NewUnstartedServer(twoc2ptest.WithGatewayKey(priv))
	assert.True(t, priv.PublicKey.Equal(srv.GatewayKey()), "the server's gateway key is the one given")
	other := twoc2ptest.NewUnstartedServer()
	assert.False(t, priv.PublicKey.Equal(other.GatewayKey()), "a server without the option makes its own")
}

func TestOptionsRefuseBadInput(t *testing.T) {
	for name, opt := range map[string]twoc2ptest.Option{
		"no secret": twoc2ptest.WithMerchant("m", ""), "no merchant": twoc2ptest.WithMerchant("", "s"),
		"retry-after": twoc2ptest.WithSettings(fakes.Settings{RetryAfter: -1}), "token rates": twoc2ptest.WithFaultRates(fakes.Rates{Pre: 2}, 1),
		"inquiry rates":    twoc2ptest.WithEndpointFaultRates(twoc2ptest.Inquiry, fakes.Rates{Pre: 0.6, Post: 0.6}),
		"endpoint":         twoc2ptest.WithEndpointFaultRates("other", fakes.Rates{}),
		"web payment base": twoc2ptest.WithWebPaymentBase(" "), "merchant key": twoc2ptest.WithMerchantKey(nil),
		"gateway key": twoc2ptest.WithGatewayKey(nil),
		"hook":        twoc2ptest.WithHook(nil), "test": twoc2ptest.WithTest(nil),
	} {
		assert.Panics(t, func() { twoc2ptest.NewUnstartedServer(opt) }, name)
	}
	g := start(t)
	assert.Error(t, g.srv.SetFaultRates(fakes.Rates{Mid: -1}))
	assert.Error(t, g.srv.SetEndpointFaultRates(twoc2ptest.Inquiry, fakes.Rates{Mid: 1.5}))
	assert.Error(t, g.srv.SetEndpointFaultRates("other", fakes.Rates{}))
}
