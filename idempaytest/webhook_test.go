package idempaytest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/stretchr/testify/require"
)

// Signatures computed with Python's hmac module, not with Go: the signers
// must reproduce them byte for byte. (Package webhook's tests check the
// same values again with Node.)
const (
	sigTime = 1767225600

	stripeVecSecret idempay.Secret = "whsec_idempay_vector_secret"
	stripeVecBody                  = `{"id":"evt_1IdempayVector","object":"event","type":"payment_intent.succeeded",` +
		`"data":{"object":{"id":"pi_1","description":"ฟ้า & <tea>"}}}`
	stripeVecSig = "b1f78afcc70520cabe190f8c347db29cd63418ab605aad44cc4e725a1444ebf5"

	omiseVecSecret idempay.Secret = "aWRlbXBheSBvbWlzZSB2ZWN0b3Iga2V5LCAzMiBiISE="
	omiseVecBody                  = `{"object":"event","id":"evnt_test_idempayvector","key":"charge.complete",` +
		`"data":{"object":"charge","id":"chrg_test_1","description":"ฟ้า & <tea>"}}`
	omiseVecSig = "cb46d1e4371d7ca5277a09da029246ca787f4ea54a718e3c3b1502c809b2a295"
)

func TestSignStripeWebhook(t *testing.T) {
	t.Parallel()
	h := idempaytest.SignStripeWebhook([]byte(stripeVecBody), stripeVecSecret, time.Unix(sigTime, 0))
	require.Equal(t, "t=1767225600,v1="+stripeVecSig, h.Get("Stripe-Signature"))
	require.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"))

	rotated := idempaytest.SignStripeWebhook([]byte(stripeVecBody), "whsec_new", time.Unix(sigTime, 0), stripeVecSecret, "whsec_third")
	require.Regexp(t, regexp.MustCompile(`^t=1767225600(,v1=[0-9a-f]{64}){3}$`), rotated.Get("Stripe-Signature"))
	require.Contains(t, rotated.Get("Stripe-Signature"), ",v1="+stripeVecSig+",", "one v1 per secret, in order")
}

func TestSignOmiseWebhook(t *testing.T) {
	t.Parallel()
	at := time.Unix(sigTime, 0)
	h := idempaytest.SignOmiseWebhook([]byte(omiseVecBody), omiseVecSecret, at)
	require.Equal(t, omiseVecSig, h.Get("Omise-Signature"))
	require.Equal(t, "1767225600", h.Get("Omise-Signature-Timestamp"))
	require.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"))

	unpadded := idempay.Secret(strings.TrimRight(omiseVecSecret.Reveal(), "="))
	require.Equal(t, h, idempaytest.SignOmiseWebhook([]byte(omiseVecBody), unpadded, at))

	two := idempaytest.SignOmiseWebhook([]byte(omiseVecBody), "bmV3IHNlY3JldA==", at, omiseVecSecret)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64},`+omiseVecSig+`$`), two.Get("Omise-Signature"))

	require.PanicsWithValue(t, "idempaytest: SignOmiseWebhook: secret 1 is not base64", func() {
		idempaytest.SignOmiseWebhook([]byte("{}"), omiseVecSecret, at, "not base64 at all!")
	})
}

func TestWebhookRequest(t *testing.T) {
	t.Parallel()
	body := idempaytest.StripeEvent("evt_1", "charge.succeeded", nil)
	h := idempaytest.SignStripeWebhook(body, stripeVecSecret, time.Unix(sigTime, 0))
	r := idempaytest.WebhookRequest("/hooks", body, h)
	require.Equal(t, http.MethodPost, r.Method)
	require.Equal(t, "/hooks", r.URL.Path)
	require.Equal(t, h.Get("Stripe-Signature"), r.Header.Get("Stripe-Signature"))
	got, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	require.Equal(t, body, got)

	r.Header.Set("Stripe-Signature", "changed")
	require.NotEqual(t, "changed", h.Get("Stripe-Signature"), "the request has its own copy of the header")
}

func TestEventBodies(t *testing.T) {
	t.Parallel()
	require.JSONEq(t, `{"id":"evt_1","object":"event","type":"charge.succeeded","livemode":false,"data":{"object":{}}}`,
		string(idempaytest.StripeEvent("evt_1", "charge.succeeded", nil)))
	require.JSONEq(t, `{"id":"evt_2","object":"event","type":"payment_intent.succeeded","livemode":false,"data":{"object":{"id":"pi_1","amount":1500}}}`,
		string(idempaytest.StripeEvent("evt_2", "payment_intent.succeeded", map[string]any{"id": "pi_1", "amount": 1500})))
	require.JSONEq(t, `{"object":"event","id":"evnt_1","livemode":false,"key":"charge.complete","data":{"object":"charge","id":"chrg_1"}}`,
		string(idempaytest.OmiseEvent("evnt_1", "charge.complete", map[string]string{"object": "charge", "id": "chrg_1"})))

	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(idempaytest.OmiseEvent("evnt_1", "charge.create", nil), &top))
	require.JSONEq(t, `{}`, string(top["data"]))

	require.Panics(t, func() { idempaytest.StripeEvent("evt_1", "x", make(chan int)) })
}
