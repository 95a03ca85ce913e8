package omise

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func refundBody(extra string) string {
	return `{"object":"refund","id":"rfnd_test_1","amount":5000,"currency":"thb","charge":"chrg_test_1",` +
		`"metadata":{"idempay_op":"rf-1"}` + extra + `}`
}

func chargeBody(extra string) string {
	return `{"object":"charge","id":"chrg_test_1","amount":100000,"currency":"THB","authorized":true,"capture":false` + extra + `}`
}

// TestReadRefund is OPERATIONS.md's refund table: what each answer to
// POST /charges/{id}/refunds means.
func TestReadRefund(t *testing.T) {
	ok, wait := idempay.StateSucceeded, idempay.StatePending
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   idempay.Kind
		state  idempay.State // of the Operation, for succeeded and pending
	}{
		{"closed", 200, refundBody(`,"status":"closed"`), idempay.KindSucceeded, ok},
		{"successful", 200, refundBody(`,"status":"successful"`), idempay.KindSucceeded, ok},
		// Older refund objects (omise-go's fixtures) carry no status: a
		// refund object is a refund made.
		{"no status", 200, refundBody(``), idempay.KindSucceeded, ok},
		{"voided", 200, refundBody(`,"status":"closed","voided":true`), idempay.KindSucceeded, ok},
		{"pending", 200, refundBody(`,"status":"pending"`), idempay.KindPending, wait},
		{"failed refund object", 200, refundBody(`,"status":"failed"`), idempay.KindDeclined, ""},
		{"a status word not known", 200, refundBody(`,"status":"reversed"`), idempay.KindUnknown, ""},
		{"expanded charge", 200, `{"object":"refund","id":"rfnd_test_1","amount":5,"currency":"thb","status":"closed","charge":{"object":"charge","id":"chrg_test_1"}}`, idempay.KindSucceeded, ok},
		{"a charge, not a refund", 200, chargeBody(`,"status":"successful","paid":true`), idempay.KindUnknown, ""},
		{"an error object at 200", 200, omiseErr("failed_refund"), idempay.KindUnknown, ""},
		{"html at 200", 200, `<html>ok</html>`, idempay.KindUnknown, ""},
		{"empty 200", 200, ``, idempay.KindUnknown, ""},
		{"3xx", 302, ``, idempay.KindUnknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := readAs(idempay.OpRefund)(answer(tc.status, tc.body))
			require.Equal(t, tc.kind, v.Kind)
			assert.False(t, v.Replayed)
			switch tc.kind {
			case idempay.KindSucceeded, idempay.KindPending:
				require.NotNil(t, v.Operation)
				assert.Equal(t, "rfnd_test_1", v.Operation.ID)
				assert.Equal(t, tc.state, v.Operation.State)
				assert.Equal(t, "THB", v.Operation.Currency)
			case idempay.KindDeclined:
				require.NotNil(t, v.Err)
				assert.Equal(t, "failed", v.Err.Code)
				assert.Nil(t, v.Operation)
			default:
				assert.Nil(t, v.Operation)
			}
		})
	}
}

// TestOpErrorMapping is OPERATIONS.md's error table, for refunds, captures
// and reverses alike. No error is a definite refusal (KindDeclined):
// Omise stores nothing under a key, so a refusal speaks only for the
// request that got it, and the Client makes it a failure only when no
// earlier attempt may have done what this one was refused.
func TestOpErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		kind   idempay.Kind
	}{
		{400, omiseErr("invalid_amount"), idempay.KindInvalid},
		{400, omiseErr("failed_refund"), idempay.KindInvalid},
		{400, omiseErr("failed_capture"), idempay.KindInvalid},
		{400, omiseErr("expired_charge"), idempay.KindInvalid},
		{400, omiseErr("invalid_charge"), idempay.KindInvalid},
		{400, omiseErr("failed_void"), idempay.KindInvalid},
		{400, omiseErr("bad_request"), idempay.KindInvalid},
		{400, omiseErr("some_new_code"), idempay.KindInvalid},
		{404, omiseErr("not_found"), idempay.KindConfig}, // the store's charge is not this key's
		{404, `<html>not found</html>`, idempay.KindConfig},
		{401, omiseErr("authentication_failure"), idempay.KindConfig},
		{400, omiseErr("backend_error"), idempay.KindServerError}, // Omise's "please try again"
		{500, omiseErr("backend_error"), idempay.KindServerError},
		{503, omiseErr("service_unavailable"), idempay.KindServerError},
		{502, `<html>bad gateway</html>`, idempay.KindServerError},
		{500, `{}`, idempay.KindServerError},
		{409, omiseErr("conflict"), idempay.KindInFlight},
		{429, omiseErr("rate_limit"), idempay.KindRateLimited},
		{422, `{"error":"key reused"}`, idempay.KindKeyConflict},
		{422, omiseErr("invalid_amount"), idempay.KindInvalid},
	} {
		for name, read := range map[string]func(int, string) idempay.Verdict{
			"refund":  func(s int, b string) idempay.Verdict { return readAs(idempay.OpRefund)(answer(s, b)) },
			"capture": func(s int, b string) idempay.Verdict { return readAs(idempay.OpCapture)(answer(s, b)) },
			"cancel":  func(s int, b string) idempay.Verdict { return readAs(idempay.OpCancel)(answer(s, b)) },
		} {
			v := read(tc.status, tc.body)
			assert.Equal(t, tc.kind, v.Kind, "%s: HTTP %d %s", name, tc.status, tc.body)
			assert.NotEqual(t, idempay.KindDeclined, v.Kind)
			assert.NotNil(t, v.Err, "%s: HTTP %d", name, tc.status)
			assert.Nil(t, v.Operation)
		}
	}
}

// TestReadCaptureAndCancel is OPERATIONS.md's table for the charge a
// capture or a reverse answers.
func TestReadCaptureAndCancel(t *testing.T) {
	succeeded, declined, unknown := idempay.KindSucceeded, idempay.KindDeclined, idempay.KindUnknown
	for _, tc := range []struct {
		name            string
		body            string
		capture, cancel idempay.Kind
		amount          int64 // the operation's, when it succeeded
	}{
		{"captured in part", chargeBody(`,"status":"successful","paid":true,"authorized_amount":100000,"captured_amount":50000`), succeeded, declined, 50000},
		{"captured, no captured_amount", chargeBody(`,"status":"successful","paid":true`), succeeded, declined, 100000},
		{"reversed", chargeBody(`,"status":"reversed","reversed":true,"authorized_amount":100000`), declined, succeeded, 100000},
		{"expired", chargeBody(`,"status":"expired","expired":true`), declined, declined, 0},
		{"failed", `{"object":"charge","id":"chrg_test_1","amount":100000,"status":"failed","failure_code":"insufficient_fund"}`, declined, declined, 0},
		// Still an authorisation: the request did not do what it asked,
		// yet an answer proves nothing absent (only a lookup may).
		{"still authorised", chargeBody(`,"status":"pending","capturable":true,"reversible":true`), unknown, unknown, 0},
		{"captured when made", `{"object":"charge","id":"chrg_test_1","amount":100000,"status":"successful","paid":true,"capture":true}`, unknown, declined, 0},
		{"paid with another status", chargeBody(`,"status":"pending","paid":true`), unknown, declined, 0},
		{"a status word not known", chargeBody(`,"status":"disputed"`), unknown, unknown, 0},
		{"a refund, not a charge", refundBody(`,"status":"closed"`), unknown, unknown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []struct {
				kind idempay.Kind
				v    idempay.Verdict
			}{
				{tc.capture, readAs(idempay.OpCapture)(answer(200, tc.body))},
				{tc.cancel, readAs(idempay.OpCancel)(answer(200, tc.body))},
			} {
				require.Equal(t, op.kind, op.v.Kind)
				switch op.kind {
				case idempay.KindSucceeded:
					require.NotNil(t, op.v.Operation)
					assert.Equal(t, "chrg_test_1", op.v.Operation.ID)
					assert.Equal(t, tc.amount, op.v.Operation.Amount)
					assert.Equal(t, idempay.StateSucceeded, op.v.Operation.State)
				case idempay.KindDeclined:
					require.NotNil(t, op.v.Err)
					assert.NotEmpty(t, op.v.Err.Code)
				default:
					assert.Nil(t, op.v.Operation)
				}
			}
		})
	}
}

func opReq(t idempay.OpType) idempay.OpRequest {
	return idempay.OpRequest{Type: t, ID: "rf-1", IntentID: "o1", ChargeRef: "chrg_test_1", Amount: 5000, Currency: "THB",
		Reason: "requested_by_customer", Metadata: map[string]string{"ticket": "T-9"}}
}

func formOf(t *testing.T, body io.Reader) url.Values {
	t.Helper()
	b, _ := io.ReadAll(body)
	f, err := url.ParseQuery(string(b))
	require.NoError(t, err)
	return f
}

// TestNewOpRequests: what each operation sends, with the key in the body
// (refunds: metadata) and the header, and Omise's authentication.
func TestNewOpRequests(t *testing.T) {
	ctx := context.Background()
	r, err := Provider{}.NewOpRequest(ctx, target(), opReq(idempay.OpRefund), "key-1")
	require.NoError(t, err)
	assert.Equal(t, "https://api.omise.test/charges/chrg_test_1/refunds", r.URL.String())
	assert.Equal(t, url.Values{"amount": {"5000"}, "metadata[idempay_op]": {"rf-1"}, "metadata[idempay_intent]": {"o1"},
		"metadata[idempay_namespace]": {"omise:default"}, "metadata[idempay_key]": {"key-1"}, "metadata[ticket]": {"T-9"}},
		formOf(t, r.Body), "the reason has no place in Omise's refund")
	for _, r := range []*http.Request{r} {
		user, pass, ok := r.BasicAuth()
		assert.True(t, ok && user == "skey_test_1" && pass == "")
		assert.Equal(t, DefaultVersion, r.Header.Get("Omise-Version"))
		assert.Equal(t, "key-1", r.Header.Get("Idempotency-Key"))
	}

	r, err = Provider{}.NewOpRequest(ctx, target(), opReq(idempay.OpCapture), "key-2")
	require.NoError(t, err)
	assert.Equal(t, "https://api.omise.test/charges/chrg_test_1/capture", r.URL.String())
	assert.Equal(t, url.Values{"capture_amount": {"5000"}}, formOf(t, r.Body), "Omise's capture keeps no metadata")
	assert.Equal(t, "key-2", r.Header.Get("Idempotency-Key"))

	r, err = Provider{}.NewOpRequest(ctx, target(), opReq(idempay.OpCancel), "key-3")
	require.NoError(t, err)
	assert.Equal(t, "https://api.omise.test/charges/chrg_test_1/reverse", r.URL.String())
	assert.Empty(t, formOf(t, r.Body))
	assert.Equal(t, "key-3", r.Header.Get("Idempotency-Key"), "the Client keeps net/http from resending it")

	// A charge ID that would leave the charge's path is not sent.
	for _, ref := range []string{"", "chrg_1/../../customers", "chrg?x=1", ".."} {
		op := opReq(idempay.OpRefund)
		op.ChargeRef = ref
		_, err := Provider{}.NewOpRequest(ctx, target(), op, "k")
		assert.Error(t, err, ref)
	}
}

// TestValidateOps: what is refused before anything is stored.
func TestValidateOps(t *testing.T) {
	p := Provider{}
	assert.NoError(t, p.ValidateOp(opReq(idempay.OpRefund)))
	assert.NoError(t, p.ValidateOp(opReq(idempay.OpCapture)))
	assert.NoError(t, p.ValidateOp(idempay.OpRequest{Type: idempay.OpCancel, ID: "c", IntentID: "o"}))
	for name, op := range map[string]func(*idempay.OpRequest){
		"a currency Omise scales otherwise": func(o *idempay.OpRequest) { o.Currency = "BHD" },
		"idempay's op tag":                  func(o *idempay.OpRequest) { o.Metadata = map[string]string{OpMetadataKey: "x"} },
		"idempay's key tag":                 func(o *idempay.OpRequest) { o.Metadata = map[string]string{KeyMetadataKey: "x"} },
		"brackets":                          func(o *idempay.OpRequest) { o.Metadata = map[string]string{"a[b]": "x"} },
	} {
		o := opReq(idempay.OpRefund)
		op(&o)
		var ve *idempay.ValidationError
		assert.ErrorAs(t, p.ValidateOp(o), &ve, name)
	}
	var ve *idempay.ValidationError
	assert.ErrorAs(t, Provider{Version: "2019 05 29"}.ValidateOp(opReq(idempay.OpCancel)), &ve)
	o := opReq(idempay.OpCapture)
	o.Currency = "KWD"
	assert.ErrorAs(t, p.ValidateOp(o), &ve)
	assert.True(t, strings.Contains(ve.Error(), "KWD"))
}

// readAs is the adapter's reader of answers to operations of type op.
func readAs(op idempay.OpType) func(*http.Response, []byte) idempay.Verdict {
	return func(resp *http.Response, body []byte) idempay.Verdict { return Provider{}.ReadOp(op, resp, body) }
}
