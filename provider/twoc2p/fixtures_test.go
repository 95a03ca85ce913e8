package twoc2p_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fixtures"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signedAnswer is one answer 2C2P's servers signed, with the merchant key
// it verifies under (testdata/upstream/SOURCES.txt says where each is from).
type signedAnswer struct {
	Source    string          `json:"source"`
	SecretKey string          `json:"secretKey"`
	Body      json.RawMessage `json:"body"`
}

func signedAnswers(t *testing.T) map[string]signedAnswer {
	t.Helper()
	var list []signedAnswer
	require.NoError(t, json.Unmarshal(fixtures.Upstream(t, "signed_responses.json"), &list))
	m := map[string]signedAnswer{}
	for _, a := range list {
		m[a.Source] = a
	}
	require.Len(t, m, 6)
	return m
}

// replayAnswer serves the answer to every request, under its key.
func replayAnswer(t *testing.T, a signedAnswer) idempay.Target {
	return idempay.Target{BaseURL: fixtures.Replay(t, http.StatusOK, nil, a.Body), Credentials: idempay.Secret(a.SecretKey),
		Namespace: tc2pNS}
}

// TestTwoC2PFixturesPaymentResults reads 2C2P's own signed payment results
// as Payment Inquiry answers: each verifies under its merchant's key
// (strict base64 included) and says what 2C2P meant, paid or declined,
// with its tranRef, amount and currency.
func TestTwoC2PFixturesPaymentResults(t *testing.T) {
	answers := signedAnswers(t)
	for _, tc := range []struct {
		source, merchant, invoice string
		kind                      idempay.Kind
		id                        string
		amount                    int64
		code                      string
	}{
		{"mihir-2c2psample_Callabck.java.9a30ab93.txt", "702702000001875", "pay1", idempay.KindSucceeded, "4790185", 100000, "0000"},
		{"mihir-2c2psample_Callabck.java.dca60235.txt", "702702000001875", "pay6", idempay.KindSucceeded, "4814718", 1000, "0000"},
		{"mihir-2c2psample_Callabck.java.791cefad.txt", "702702000001875", "pay114", idempay.KindSucceeded, "4817889", 5500, "0000"},
		{"mihir-2c2psample_Callabck.java.452f5377.txt", "702702000001875", "1850951463355AAF0KUVW", idempay.KindSucceeded, "5782784", 15000, "0000"},
		{"mihir-2c2psample_Callabck.java.1cb91532.txt", "702702000002950", "1718557765272CRPUILG", idempay.KindDeclined, "", 0, "4005"},
	} {
		t.Run(tc.invoice, func(t *testing.T) {
			p := twoc2p.Provider{MerchantID: tc.merchant}
			rec := idempay.Record{Namespace: tc2pNS, ID: tc.invoice, Key: "k1"}
			v, err := p.FindCharge(context.Background(), nil, replayAnswer(t, answers[tc.source]), rec)
			require.NoError(t, err)
			require.Equal(t, tc.kind, v.Kind, "%+v", v.Err)
			assert.True(t, v.Replayed, "found by inquiry")
			if tc.kind == idempay.KindDeclined {
				assert.Equal(t, tc.code, v.Err.Code)
				assert.Equal(t, "Do not honor", v.Err.Message)
				return
			}
			assert.Equal(t, tc.id, v.Charge.ID)
			assert.Equal(t, tc.amount, v.Charge.Amount)
			assert.Equal(t, "SGD", v.Charge.Currency)
			assert.Equal(t, idempay.StateSucceeded, v.Charge.State)

			// Under another merchant's key the same answer proves nothing.
			wrongKey := answers[tc.source]
			wrongKey.SecretKey = "00" + wrongKey.SecretKey[2:]
			v, err = p.FindCharge(context.Background(), nil, replayAnswer(t, wrongKey), rec)
			require.NoError(t, err)
			assert.Equal(t, idempay.KindUnknown, v.Kind)
		})
	}
}

// TestTwoC2PFixtureTokenAnswer reads 2C2P's documented Payment Token answer
// (signed under its public demo key): a token issued is a pending charge
// with the page to send the customer to; as an inquiry answer it names no
// invoice and settles nothing.
func TestTwoC2PFixtureTokenAnswer(t *testing.T) {
	a := signedAnswers(t)["yunjoung808-demo2c2p_JwtService.java.d81cb8fc.txt"]
	tg := replayAnswer(t, a)
	p := twoc2p.Provider{MerchantID: "JT01"}
	req, err := p.NewChargeRequest(context.Background(), tg, tc2pOrder("ORDER1"), "k1")
	require.NoError(t, err)
	v := fixtures.ReadCharge(t, p, req)
	require.Equal(t, idempay.KindPending, v.Kind)
	assert.Equal(t, "kSAops9Zwhos8hSTSeLTUcJ0UQiVaa6vBi5az9QifEE+Rd65cM3dNyf4W5aYViqzkaj5sLdTmoeI+021/YroKDb4RmVoqg8aP+hOEJD0t+g=", v.Charge.ID)
	assert.Contains(t, v.Charge.AuthorizeURL, "https://sandbox-pgw-ui.2c2p.com/payment/4.1/#/token/")
	assert.Equal(t, idempay.StatePending, v.Charge.State)
	assert.Equal(t, int64(123456), v.Charge.Amount)

	v, err = p.FindCharge(context.Background(), nil, tg, idempay.Record{Namespace: tc2pNS, ID: "ORDER1", Key: "k1"})
	require.NoError(t, err)
	assert.Equal(t, idempay.KindUnknown, v.Kind)
}
