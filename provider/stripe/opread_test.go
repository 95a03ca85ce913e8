package stripe

import (
	"net/http"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func refundBody(status string) string {
	return `{"id":"re_1","object":"refund","amount":500,"currency":"jpy","payment_intent":"pi_1","status":"` + status +
		`","failure_reason":"lost_or_stolen_card","metadata":{"idempay_op":"rf-1"}}`
}

func intentBody(status string) string {
	return `{"id":"pi_1","object":"payment_intent","amount":1500,"amount_received":1200,"currency":"jpy","status":"` +
		status + `","metadata":{}}`
}

const (
	alreadyRefunded = `{"error":{"type":"invalid_request_error","code":"charge_already_refunded","message":"Charge ch_1 has already been refunded."}}`
	tooLarge        = `{"error":{"type":"invalid_request_error","code":"amount_too_large","param":"amount","message":"Refund amount (¥600) is greater than unrefunded amount on charge (¥500)"}}`
	notRefundable   = `{"error":{"type":"invalid_request_error","code":"charge_not_refundable","message":"This PaymentIntent does not have a successful charge to refund."}}`
	unexpected      = `{"error":{"type":"invalid_request_error","code":"payment_intent_unexpected_state","message":"This PaymentIntent could not be captured because it has a status of succeeded."}}`
	missing         = `{"error":{"type":"invalid_request_error","code":"resource_missing","param":"payment_intent","message":"No such payment_intent: 'pi_1'"}}`
	keyReused       = `{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters they were first used with."}}`
	keyInUse        = `{"error":{"type":"invalid_request_error","code":"idempotency_key_in_use"}}` // as Stripe sends it
	badReason       = `{"error":{"type":"invalid_request_error","code":"parameter_invalid","param":"reason"}}`
)

type opCase struct {
	name    string
	status  int
	body    string
	headers []string
	kind    idempay.Kind
	state   idempay.State // of the Operation, when one is read
	amount  int64
	code    string // of the Err, when one is read
}

// readAs is the adapter's reader of answers to operations of type op.
func readAs(op idempay.OpType) func(*http.Response, []byte) idempay.Verdict {
	return func(resp *http.Response, body []byte) idempay.Verdict { return Provider{}.ReadOp(op, resp, body) }
}

func runOpCases(t *testing.T, op idempay.OpType, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := readAs(op)(answer(tc.status, tc.body, append([]string{"Request-Id", "req_1"}, tc.headers...)...))
			assert.Equal(t, tc.kind, v.Kind)
			assert.Equal(t, "req_1", v.RequestID)
			assert.Nil(t, v.Charge)
			if tc.state != "" {
				require.NotNil(t, v.Operation)
				assert.Equal(t, tc.state, v.Operation.State)
				assert.Equal(t, tc.amount, v.Operation.Amount)
				assert.Equal(t, "JPY", v.Operation.Currency)
			} else {
				assert.Nil(t, v.Operation, "no operation without a success or pending")
			}
			if tc.code != "" {
				require.NotNil(t, v.Err)
				assert.Equal(t, tc.code, v.Err.Code)
			}
		})
	}
}

// The errors every operation shares: never a definite refusal when Stripe
// may have acted. A fresh 400 is KindInvalid (failed only if no earlier
// attempt may have reached Stripe); the same 400 replayed is the refusal
// Stripe stored for the key, KindDeclined.
func sharedErrorCases(refusal string) []opCase {
	replayed := []string{"Idempotent-Replayed", "true"}
	return []opCase{
		{name: "400 " + refusal + " fresh", status: 400, body: bodies[refusal], kind: idempay.KindInvalid, code: refusal},
		{name: "400 " + refusal + " replayed", status: 400, body: bodies[refusal], headers: replayed, kind: idempay.KindDeclined, code: refusal},
		{name: "400 resource_missing", status: 400, body: missing, kind: idempay.KindConfig, code: "resource_missing"},
		{name: "404 resource_missing", status: 404, body: missing, kind: idempay.KindConfig, code: "resource_missing"},
		{name: "400 idempotency_error", status: 400, body: keyReused, kind: idempay.KindKeyConflict},
		{name: "400 idempotency_error replayed", status: 400, body: keyReused, headers: replayed, kind: idempay.KindKeyConflict},
		{name: "409 idempotency_key_in_use", status: 409, body: keyInUse, kind: idempay.KindInFlight, code: "idempotency_key_in_use"},
		{name: "429 lock_timeout", status: 429, body: `{"error":{"type":"invalid_request_error","code":"lock_timeout"}}`, kind: idempay.KindRateLimited},
		{name: "500", status: 500, body: `{"error":{"type":"api_error"}}`, kind: idempay.KindServerError},
		{name: "500 replayed", status: 500, body: `{"error":{"type":"api_error"}}`, headers: replayed, kind: idempay.KindServerError},
		{name: "502 proxy page", status: 502, body: `<html>bad gateway</html>`, kind: idempay.KindServerError},
		{name: "503", status: 503, body: ``, kind: idempay.KindServerError},
		{name: "401", status: 401, body: `{"error":{"type":"invalid_request_error"}}`, kind: idempay.KindConfig},
		{name: "400 bad parameter", status: 400, body: badReason, kind: idempay.KindInvalid, code: "parameter_invalid"},
		{name: "302", status: 302, body: ``, kind: idempay.KindUnknown},
		{name: "200 not JSON", status: 200, body: `<html>ok</html>`, kind: idempay.KindUnknown},
		{name: "200 empty", status: 200, body: ``, kind: idempay.KindUnknown},
	}
}

var bodies = map[string]string{"charge_already_refunded": alreadyRefunded, "amount_too_large": tooLarge,
	"charge_not_refundable": notRefundable, "payment_intent_unexpected_state": unexpected}

// TestRefundAnswers is OPERATIONS.md's refund column.
func TestRefundAnswers(t *testing.T) {
	cases := []opCase{
		{name: "succeeded", status: 200, body: refundBody("succeeded"), kind: idempay.KindSucceeded, state: idempay.StateSucceeded, amount: 500},
		{name: "pending", status: 200, body: refundBody("pending"), kind: idempay.KindPending, state: idempay.StatePending, amount: 500},
		{name: "requires_action", status: 200, body: refundBody("requires_action"), kind: idempay.KindPending, state: idempay.StatePending, amount: 500},
		{name: "failed", status: 200, body: refundBody("failed"), kind: idempay.KindDeclined, code: "refund_failed"},
		{name: "canceled", status: 200, body: refundBody("canceled"), kind: idempay.KindDeclined, code: "refund_canceled"},
		{name: "another status", status: 200, body: refundBody("reversed"), kind: idempay.KindUnknown},
		{name: "a PaymentIntent, not a refund", status: 200, body: intentBody("succeeded"), kind: idempay.KindUnknown},
		{name: "no object", status: 200, body: `{"id":"re_1","status":"succeeded"}`, kind: idempay.KindUnknown},
	}
	for _, code := range []string{"charge_already_refunded", "amount_too_large", "charge_not_refundable", "payment_intent_unexpected_state"} {
		cases = append(cases, sharedErrorCases(code)...)
	}
	runOpCases(t, idempay.OpRefund, cases)

	// The failure reason is kept for the caller.
	v := readAs(idempay.OpRefund)(answer(200, refundBody("failed")))
	assert.Contains(t, v.Err.Message, "lost_or_stolen_card")
}

// TestCaptureAnswers is OPERATIONS.md's capture column: a capture answers
// the PaymentIntent, whose amount_received is what was captured.
func TestCaptureAnswers(t *testing.T) {
	cases := []opCase{
		{name: "succeeded", status: 200, body: intentBody("succeeded"), kind: idempay.KindSucceeded, state: idempay.StateSucceeded, amount: 1200},
		{name: "processing", status: 200, body: intentBody("processing"), kind: idempay.KindPending, state: idempay.StatePending, amount: 1200},
		{name: "requires_capture", status: 200, body: intentBody("requires_capture"), kind: idempay.KindUnknown},
		{name: "canceled", status: 200, body: intentBody("canceled"), kind: idempay.KindUnknown},
		{name: "a refund, not a PaymentIntent", status: 200, body: refundBody("succeeded"), kind: idempay.KindUnknown},
	}
	cases = append(cases, sharedErrorCases("payment_intent_unexpected_state")...)
	runOpCases(t, idempay.OpCapture, cases)
}

// TestCancelAnswers is OPERATIONS.md's cancel column.
func TestCancelAnswers(t *testing.T) {
	cases := []opCase{
		{name: "canceled", status: 200, body: intentBody("canceled"), kind: idempay.KindSucceeded, state: idempay.StateSucceeded, amount: 1500},
		{name: "succeeded", status: 200, body: intentBody("succeeded"), kind: idempay.KindUnknown},
		{name: "requires_capture", status: 200, body: intentBody("requires_capture"), kind: idempay.KindUnknown},
		{name: "a refund, not a PaymentIntent", status: 200, body: refundBody("canceled"), kind: idempay.KindUnknown},
	}
	cases = append(cases, sharedErrorCases("payment_intent_unexpected_state")...)
	runOpCases(t, idempay.OpCancel, cases)
}

// Stripe-Should-Retry and the replay mark reach every operation's verdict.
func TestOpRetryHeaders(t *testing.T) {
	for _, op := range []idempay.OpType{idempay.OpRefund, idempay.OpCapture, idempay.OpCancel} {
		v := readAs(op)(answer(500, `{"error":{"type":"api_error"}}`, "Stripe-Should-Retry", "false", "Idempotent-Replayed", "true"))
		assert.Equal(t, idempay.RetryNo, v.Retry)
		assert.True(t, v.Replayed)
	}
}

// Amounts come back in ISO minor units: ISK, counted in hundredths at
// Stripe, is divided back.
func TestOpAmountsInISOUnits(t *testing.T) {
	v := readAs(idempay.OpRefund)(answer(200, `{"id":"re_1","object":"refund","amount":50000,"currency":"isk","status":"succeeded"}`))
	require.NotNil(t, v.Operation)
	assert.Equal(t, int64(500), v.Operation.Amount)
	assert.Equal(t, "ISK", v.Operation.Currency)
}
