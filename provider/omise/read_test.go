package omise

import (
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func answer(status int, body string) (*http.Response, []byte) {
	return &http.Response{StatusCode: status, Header: http.Header{}}, []byte(body)
}

func omiseErr(code string) string {
	return `{"object":"error","location":"https://www.omise.co/api-errors#` + code + `","code":"` + code + `","message":"m"}`
}

// TestErrorMapping is the README's table: every Omise error answer and
// the verdict it gives.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		status int
		body   string
		kind   idempay.Kind
	}{
		{401, omiseErr("authentication_failure"), idempay.KindConfig},
		{400, omiseErr("used_token"), idempay.KindUnknown},
		{400, omiseErr("invalid_card"), idempay.KindInvalid},
		{400, omiseErr("invalid_charge"), idempay.KindInvalid},
		{400, omiseErr("bad_request"), idempay.KindInvalid},
		{404, omiseErr("not_found"), idempay.KindInvalid},
		{400, omiseErr("failed_fraud_check"), idempay.KindDeclined},
		{400, omiseErr("failed_capture"), idempay.KindUnknown},
		{500, omiseErr("backend_error"), idempay.KindServerError},
		{503, omiseErr("service_unavailable"), idempay.KindServerError},
		{502, `<html>bad gateway</html>`, idempay.KindServerError},
		{404, `<html>not found</html>`, idempay.KindConfig},
		{403, `{}`, idempay.KindConfig},
		{409, omiseErr("conflict"), idempay.KindInFlight},
		{422, omiseErr("idempotency_key_reused"), idempay.KindKeyConflict},
		{429, omiseErr("rate_limit"), idempay.KindRateLimited},
		{400, omiseErr("some_new_code"), idempay.KindInvalid},
		{500, omiseErr("some_new_code"), idempay.KindServerError},
	}
	for _, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			v := Provider{}.ReadCharge(answer(tc.status, tc.body))
			assert.Equal(t, tc.kind, v.Kind, "HTTP %d", tc.status)
			assert.False(t, v.Replayed, "Omise marks no replay")
			require.NotNil(t, v.Err)
			assert.Nil(t, v.Charge)
		})
	}
}

// TestStatusMapping: what each charge status means for the money.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		name, body string
		kind       idempay.Kind
		state      idempay.State
		status     string
	}{
		{"successful", `"status":"successful","authorized":true,"paid":true,"capture":true`,
			idempay.KindSucceeded, idempay.StateSucceeded, "successful"},
		{"pending 3-D Secure", `"status":"pending","authorized":false,"capture":true,"authorize_uri":"https://pay.omise.co/3ds"`,
			idempay.KindPending, idempay.StatePending, "pending"},
		{"pending offsite, capture absent", `"status":"pending"`, idempay.KindPending, idempay.StatePending, "pending"},
		{"authorised, waiting for capture", `"status":"pending","authorized":true,"capture":false`,
			idempay.KindSucceeded, idempay.StateSucceeded, StatusAuthorized},
		{"failed", `"status":"failed","failure_code":"insufficient_fund","failure_message":"insufficient funds"`,
			idempay.KindDeclined, "", ""},
		{"reversed", `"status":"reversed"`, idempay.KindDeclined, "", ""},
		{"expired", `"status":"expired"`, idempay.KindDeclined, "", ""},
		{"unknown status", `"status":"future"`, idempay.KindUnknown, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"object":"charge","id":"chrg_test_1","amount":150000,"currency":"thb",` + tc.body + `}`
			v := Provider{}.ReadCharge(answer(200, body))
			assert.Equal(t, tc.kind, v.Kind)
			if tc.state == "" {
				assert.Nil(t, v.Charge)
				return
			}
			require.NotNil(t, v.Charge)
			assert.Equal(t, tc.state, v.Charge.State)
			assert.Equal(t, tc.status, v.Charge.Status)
			assert.Equal(t, "chrg_test_1", v.Charge.ID)
			assert.Equal(t, "THB", v.Charge.Currency)
		})
	}
}

func TestFailedChargeCarriesFailure(t *testing.T) {
	v := Provider{}.ReadCharge(answer(200, `{"object":"charge","id":"chrg_1","status":"failed","failure_code":"stolen_or_lost_card","failure_message":"card was reported stolen"}`))
	require.Equal(t, idempay.KindDeclined, v.Kind)
	assert.Equal(t, &idempay.APIError{Code: "stolen_or_lost_card", Message: "card was reported stolen"}, v.Err)
}

func TestPendingKeepsAuthorizeURI(t *testing.T) {
	v := Provider{}.ReadCharge(answer(200, `{"object":"charge","id":"chrg_1","status":"pending","authorize_uri":"https://pay.omise.co/offsites/x/pay"}`))
	require.NotNil(t, v.Charge)
	assert.Equal(t, "https://pay.omise.co/offsites/x/pay", v.Charge.AuthorizeURL)
}

func TestUnreadableSuccessIsUnknown(t *testing.T) {
	for _, body := range []string{``, `nope`, `{"object":"list","data":[]}`, `{"object":"charge"}`} {
		assert.Equal(t, idempay.KindUnknown, Provider{}.ReadCharge(answer(200, body)).Kind, body)
	}
}

func TestRequestID(t *testing.T) {
	resp, body := answer(200, `{"object":"charge","id":"chrg_1","status":"successful"}`)
	resp.Header.Set("X-Request-Id", "r1")
	assert.Equal(t, "r1", Provider{}.ReadCharge(resp, body).RequestID)
}
