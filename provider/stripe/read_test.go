package stripe

import (
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func answer(status int, body string, headers ...string) (*http.Response, []byte) {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return &http.Response{StatusCode: status, Header: h}, []byte(body)
}

// TestErrorMapping is the README's table: every Stripe error answer and
// the verdict it gives.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   idempay.Kind
		code   string
	}{
		{"400 idempotency_error: key re-used with other parameters", 400,
			`{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters"}}`,
			idempay.KindKeyConflict, ""},
		{"409 idempotency_key_in_use", 409,
			`{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}`, idempay.KindInFlight, "idempotency_key_in_use"},
		{"409 other conflict", 409, `{"error":{"type":"invalid_request_error"}}`, idempay.KindInFlight, ""},
		{"402 card_error", 402,
			`{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","param":"payment_method"}}`,
			idempay.KindDeclined, "card_declined"},
		{"429 rate limit", 429, `{"error":{"type":"invalid_request_error","code":"rate_limit"}}`, idempay.KindRateLimited, "rate_limit"},
		{"429 lock_timeout", 429, `{"error":{"type":"invalid_request_error","code":"lock_timeout"}}`, idempay.KindRateLimited, "lock_timeout"},
		{"500 api_error", 500, `{"error":{"type":"api_error"}}`, idempay.KindServerError, ""},
		{"502 proxy page", 502, `<html>bad gateway</html>`, idempay.KindServerError, ""},
		{"503", 503, `{"error":{"type":"api_error"}}`, idempay.KindServerError, ""},
		{"401 bad key", 401, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`, idempay.KindConfig, ""},
		{"403 permission", 403, `{"error":{"type":"invalid_request_error","code":"secret_key_required"}}`, idempay.KindConfig, "secret_key_required"},
		{"404 unknown URL", 404, `{"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}}`, idempay.KindConfig, ""},
		{"400 invalid parameter", 400,
			`{"error":{"type":"invalid_request_error","code":"parameter_invalid_integer","param":"amount"}}`, idempay.KindInvalid, "parameter_invalid_integer"},
		{"400 missing customer", 400,
			`{"error":{"type":"invalid_request_error","code":"resource_missing","param":"customer"}}`, idempay.KindInvalid, "resource_missing"},
		{"302 redirect", 302, ``, idempay.KindUnknown, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Provider{}.ReadCharge(answer(tc.status, tc.body, "Request-Id", "req_1"))
			assert.Equal(t, tc.kind, v.Kind)
			assert.Equal(t, "req_1", v.RequestID)
			assert.Nil(t, v.Charge)
			if tc.status >= 400 {
				require.NotNil(t, v.Err)
				assert.Equal(t, tc.code, v.Err.Code)
			}
		})
	}
}

func TestDeclineCarriesCodes(t *testing.T) {
	v := Provider{}.ReadCharge(answer(402, `{"error":{"type":"card_error","code":"card_declined","decline_code":"stolen_card","message":"Your card was declined.","param":"payment_method"}}`))
	require.Equal(t, idempay.KindDeclined, v.Kind)
	assert.Equal(t, &idempay.APIError{Type: "card_error", Code: "card_declined", DeclineCode: "stolen_card",
		Param: "payment_method", Message: "Your card was declined."}, v.Err)
}

func TestReplayAndRetryHeaders(t *testing.T) {
	for _, tc := range []struct {
		headers  []string
		replayed bool
		retry    idempay.Retry
	}{
		{nil, false, idempay.RetryDefault},
		{[]string{"Idempotent-Replayed", "true"}, true, idempay.RetryDefault},
		{[]string{"Idempotent-Replayed", "false"}, false, idempay.RetryDefault},
		{[]string{"Idempotency-Replayed", "true"}, false, idempay.RetryDefault}, // not Stripe's spelling
		{[]string{"Stripe-Should-Retry", "true"}, false, idempay.RetryYes},
		{[]string{"Stripe-Should-Retry", "false", "Idempotent-Replayed", "true"}, true, idempay.RetryNo},
		{[]string{"Stripe-Should-Retry", "maybe"}, false, idempay.RetryDefault},
	} {
		v := Provider{}.ReadCharge(answer(500, `{"error":{"type":"api_error"}}`, tc.headers...))
		assert.Equal(t, tc.replayed, v.Replayed, "%v", tc.headers)
		assert.Equal(t, tc.retry, v.Retry, "%v", tc.headers)
	}
}

// TestStatusMapping: what each PaymentIntent status means for the money.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		status, extra string
		kind          idempay.Kind
		state         idempay.State
	}{
		{"succeeded", ``, idempay.KindSucceeded, idempay.StateSucceeded},
		{"requires_capture", ``, idempay.KindSucceeded, idempay.StateSucceeded},
		{"processing", ``, idempay.KindPending, idempay.StatePending},
		{"requires_action", `,"next_action":{"type":"redirect_to_url","redirect_to_url":{"url":"https://hooks.stripe.com/3ds"}}`,
			idempay.KindPending, idempay.StatePending},
		{"requires_confirmation", ``, idempay.KindPending, idempay.StatePending},
		{"requires_payment_method", ``, idempay.KindPending, idempay.StatePending},
		{"requires_payment_method", `,"last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"do_not_honor"}`,
			idempay.KindPending, idempay.StatePending}, // can be confirmed again: not final
		{"canceled", `,"cancellation_reason":"abandoned"`, idempay.KindDeclined, ""},
		{"some_future_status", ``, idempay.KindUnknown, ""},
	}
	for _, tc := range cases {
		t.Run(tc.status+tc.extra, func(t *testing.T) {
			body := `{"id":"pi_1","object":"payment_intent","amount":1500,"currency":"jpy","status":"` + tc.status + `"` + tc.extra + `}`
			v := Provider{}.ReadCharge(answer(200, body))
			assert.Equal(t, tc.kind, v.Kind)
			if tc.state == "" {
				assert.Nil(t, v.Charge)
				return
			}
			require.NotNil(t, v.Charge)
			assert.Equal(t, tc.state, v.Charge.State)
			assert.Equal(t, "pi_1", v.Charge.ID)
			assert.Equal(t, tc.status, v.Charge.Status)
			assert.Equal(t, "JPY", v.Charge.Currency)
			assert.Equal(t, int64(1500), v.Charge.Amount)
		})
	}
}

func TestRequiresActionKeepsRedirect(t *testing.T) {
	v := Provider{}.ReadCharge(answer(200, `{"id":"pi_1","status":"requires_action","amount":100,"currency":"usd",
		"next_action":{"type":"redirect_to_url","redirect_to_url":{"url":"https://hooks.stripe.com/3ds/x","return_url":"https://shop"}}}`))
	require.NotNil(t, v.Charge)
	assert.Equal(t, "https://hooks.stripe.com/3ds/x", v.Charge.AuthorizeURL)
}

func TestCanceledIsDefiniteRefusal(t *testing.T) {
	v := Provider{}.ReadCharge(answer(200, `{"id":"pi_9","status":"canceled","cancellation_reason":"duplicate","amount":100,"currency":"usd"}`))
	require.Equal(t, idempay.KindDeclined, v.Kind)
	assert.Equal(t, "payment_intent_canceled", v.Err.Code)
	assert.Contains(t, v.Err.Message, "pi_9")
	assert.Contains(t, v.Err.Message, "duplicate")
}

// A 2xx Stripe answered but we cannot read: something was done, we do not
// know what.
func TestUnreadableSuccessIsUnknown(t *testing.T) {
	for _, body := range []string{``, `not json`, `{"object":"charge","id":"ch_1"}`, `{"status":"succeeded"}`} {
		v := Provider{}.ReadCharge(answer(200, body, "Idempotent-Replayed", "true"))
		assert.Equal(t, idempay.KindUnknown, v.Kind, body)
		assert.True(t, v.Replayed)
	}
}

func TestISKAmountComesBackInKronur(t *testing.T) {
	v := Provider{}.ReadCharge(answer(200, `{"id":"pi_1","status":"succeeded","amount":150000,"currency":"isk"}`))
	require.NotNil(t, v.Charge)
	assert.Equal(t, int64(1500), v.Charge.Amount)
}
