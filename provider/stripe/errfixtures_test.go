package stripe_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/fixtures"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stripe's 400 for a refund above the charge (testdata/upstream,
// GOV.UK Pay's fixture): invalid_request_error, param amount, no code.
// Fresh, it is this request's refusal (KindInvalid: failed only if no
// earlier attempt may have reached Stripe); replayed under the key, the
// refusal Stripe stored for it, definite.
func TestStripeFixtureOverRefund(t *testing.T) {
	body := fixtures.Upstream(t, "pay-connector_refund_error_greater_amount.json")
	read := func(h http.Header) idempay.Verdict {
		return stripe.Provider{}.ReadOp(idempay.OpRefund, &http.Response{StatusCode: http.StatusBadRequest, Header: h}, body)
	}
	v := read(http.Header{})
	assert.Equal(t, idempay.KindInvalid, v.Kind)
	require.NotNil(t, v.Err)
	assert.Empty(t, v.Err.Code)
	assert.Equal(t, "amount", v.Err.Param)
	assert.Equal(t, "invalid_request_error", v.Err.Type)
	assert.Equal(t, idempay.KindDeclined, read(http.Header{"Idempotent-Replayed": {"true"}}).Kind)
}

// Stripe's 409 for a request while another with the key runs, as logged
// by a stripe-go user (testdata/upstream): invalid_request_error with code
// idempotency_key_in_use, read as in flight (retried after backoff) for a
// charge and an operation alike.
func TestStripeFixtureKeyInUse(t *testing.T) {
	log := fixtures.Upstream(t, "yns01-stripe-go-invalid-char_README.md")
	m := regexp.MustCompile(`Request failed with: (\{.*\}) \(error:`).FindSubmatch(log)
	require.NotNil(t, m)
	body := m[1]
	assert.Contains(t, string(body), `"type":"invalid_request_error"`)
	resp := &http.Response{StatusCode: http.StatusConflict, Header: http.Header{}}
	v := stripe.Provider{}.ReadCharge(resp, body)
	assert.Equal(t, idempay.KindInFlight, v.Kind, "charge")
	for _, op := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		v := stripe.Provider{}.ReadOp(op, resp, body)
		assert.Equal(t, idempay.KindInFlight, v.Kind, op)
	}
}
