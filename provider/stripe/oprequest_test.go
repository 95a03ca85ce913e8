package stripe_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/provider/stripe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func opTarget() idempay.Target {
	u, _ := url.Parse("https://api.stripe.test")
	return idempay.Target{BaseURL: u, Credentials: secret, Namespace: ns}
}

func builtForm(t *testing.T, r *http.Request, err error) url.Values {
	t.Helper()
	require.NoError(t, err)
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	f, err := url.ParseQuery(string(b))
	require.NoError(t, err)
	return f
}

func refundOp() idempay.OpRequest {
	return idempay.OpRequest{Type: idempay.OpRefund, ID: "rf-1", IntentID: "o1", ChargeRef: "pi_1", Amount: 500,
		Currency: "JPY", Reason: stripe.ReasonRequestedByCustomer, Metadata: map[string]string{"ticket": "T-9"}}
}

// The tag of operations is the one the fakes read.
func TestOpMetadataKeyIsTheFakes(t *testing.T) {
	assert.Equal(t, fakes.OpMetadataKey, stripe.OpMetadataKey)
}

// A refund is POST /v1/refunds under the key, naming the PaymentIntent,
// the amount in Stripe's units and the reason, tagged as a charge is (the
// refund ID, the intent, the namespace, the attempt's key) with the
// caller's metadata; built twice, it is the same bytes.
func TestRefundRequest(t *testing.T) {
	p := stripe.Provider{APIVersion: "2024-06-20"}
	r, err := p.NewOpRequest(context.Background(), opTarget(), refundOp(), "key-1")
	f := builtForm(t, r, err)
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "https://api.stripe.test/v1/refunds", r.URL.String())
	assert.Equal(t, "key-1", r.Header.Get("Idempotency-Key"))
	assert.Equal(t, "Bearer "+secret, r.Header.Get("Authorization"))
	assert.Equal(t, "2024-06-20", r.Header.Get("Stripe-Version"))
	assert.Equal(t, url.Values{"payment_intent": {"pi_1"}, "amount": {"500"}, "reason": {"requested_by_customer"},
		"metadata[idempay_op]": {"rf-1"}, "metadata[idempay_intent]": {"o1"}, "metadata[idempay_namespace]": {ns},
		"metadata[idempay_key]": {"key-1"}, "metadata[ticket]": {"T-9"}}, f)

	again, err := p.NewOpRequest(context.Background(), opTarget(), refundOp(), "key-1")
	require.NoError(t, err)
	b1, _ := io.ReadAll(again.Body)
	assert.Equal(t, f.Encode(), string(b1), "sorted: the same bytes on every retry")

	isk := refundOp()
	isk.Currency, isk.Amount = "ISK", 500
	r, err = p.NewOpRequest(context.Background(), opTarget(), isk, "key-1")
	assert.Equal(t, "50000", builtForm(t, r, err).Get("amount"), "ISK is counted in hundredths at Stripe")
}

// A capture names the PaymentIntent in its path and tags it with the
// capture's ID only: the PaymentIntent's idempay_key is the charge's, by
// which the charge is looked up, and is never overwritten.
func TestCaptureRequest(t *testing.T) {
	op := idempay.OpRequest{Type: idempay.OpCapture, ID: "cp-1", IntentID: "o1", ChargeRef: "pi_1", Amount: 1200,
		Currency: "JPY", Metadata: map[string]string{"shipment": "S-1"}}
	r, err := stripe.Provider{}.NewOpRequest(context.Background(), opTarget(), op, "key-2")
	f := builtForm(t, r, err)
	assert.Equal(t, "https://api.stripe.test/v1/payment_intents/pi_1/capture", r.URL.String())
	assert.Equal(t, "key-2", r.Header.Get("Idempotency-Key"))
	assert.Equal(t, url.Values{"amount_to_capture": {"1200"}, "metadata[idempay_op]": {"cp-1"},
		"metadata[shipment]": {"S-1"}}, f)
}

// A cancel carries the reason only: Stripe's cancel takes no metadata.
func TestCancelRequest(t *testing.T) {
	op := idempay.OpRequest{Type: idempay.OpCancel, ID: "cn-1", IntentID: "o1", ChargeRef: "pi_1", Amount: 1500,
		Currency: "JPY", Reason: stripe.ReasonAbandoned}
	r, err := stripe.Provider{}.NewOpRequest(context.Background(), opTarget(), op, "key-3")
	f := builtForm(t, r, err)
	assert.Equal(t, "https://api.stripe.test/v1/payment_intents/pi_1/cancel", r.URL.String())
	assert.Equal(t, "key-3", r.Header.Get("Idempotency-Key"))
	assert.Equal(t, url.Values{"cancellation_reason": {"abandoned"}}, f)
}

// A charge reference that is not one Stripe ID never reaches a path.
func TestOpRequestRefusesForeignRef(t *testing.T) {
	p := stripe.Provider{}
	for _, ref := range []string{"", "../refunds", "pi_1/cancel", "pi 1"} {
		op := refundOp()
		op.ChargeRef = ref
		_, err := p.NewOpRequest(context.Background(), opTarget(), op, "k")
		assert.Error(t, err, ref)
		_, err = p.NewOpRequest(context.Background(), opTarget(), op, "k")
		assert.Error(t, err, ref)
		_, err = p.NewOpRequest(context.Background(), opTarget(), op, "k")
		assert.Error(t, err, ref)
	}
}

func metadataOf(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%02d", i)] = "v"
	}
	return m
}

// What Stripe refuses is refused by Validate, field by field, before
// anything is stored: reason words, metadata limits counting idempay's
// tags, idempay's own keys, amounts, a cancel's metadata.
func TestValidateOps(t *testing.T) {
	p := stripe.Provider{}
	refund := func(mod func(*idempay.OpRequest)) error {
		op := refundOp()
		op.ChargeRef = ""
		mod(&op)
		return p.ValidateOp(op)
	}
	capture := func(mod func(*idempay.OpRequest)) error {
		op := idempay.OpRequest{Type: idempay.OpCapture, ID: "cp", IntentID: "o1", Currency: "JPY"}
		mod(&op)
		return p.ValidateOp(op)
	}
	cancel := func(mod func(*idempay.OpRequest)) error {
		op := idempay.OpRequest{Type: idempay.OpCancel, ID: "cn", IntentID: "o1"}
		mod(&op)
		return p.ValidateOp(op)
	}
	ok := []error{
		refund(func(*idempay.OpRequest) {}),
		refund(func(op *idempay.OpRequest) { op.Reason = "" }),
		refund(func(op *idempay.OpRequest) { op.Reason = stripe.ReasonFraudulent }),
		refund(func(op *idempay.OpRequest) { op.Metadata = metadataOf(46) }),
		capture(func(*idempay.OpRequest) {}),
		capture(func(op *idempay.OpRequest) { op.Amount = 1200; op.Metadata = metadataOf(45) }),
		cancel(func(*idempay.OpRequest) {}),
		cancel(func(op *idempay.OpRequest) { op.Reason = stripe.ReasonAbandoned }),
	}
	for i, err := range ok {
		assert.NoError(t, err, "case %d", i)
	}
	for name, tc := range map[string]struct {
		err   error
		field string
	}{
		"refund reason not Stripe's":        {refund(func(op *idempay.OpRequest) { op.Reason = "customer changed mind" }), "Reason"},
		"abandoned is a cancel's reason":    {refund(func(op *idempay.OpRequest) { op.Reason = stripe.ReasonAbandoned }), "Reason"},
		"refund metadata beyond 46":         {refund(func(op *idempay.OpRequest) { op.Metadata = metadataOf(47) }), "Metadata"},
		"refund metadata with idempay_op":   {refund(func(op *idempay.OpRequest) { op.Metadata = map[string]string{"idempay_op": "x"} }), "Metadata"},
		"refund metadata with idempay_key":  {refund(func(op *idempay.OpRequest) { op.Metadata = map[string]string{"idempay_key": "x"} }), "Metadata"},
		"refund metadata key with brackets": {refund(func(op *idempay.OpRequest) { op.Metadata = map[string]string{"a[b]": "x"} }), "Metadata"},
		"refund amount beyond Stripe's":     {refund(func(op *idempay.OpRequest) { op.Currency, op.Amount = "USD", 100_000_000 }), "Amount"},
		"refund of MGA not whole ariary":    {refund(func(op *idempay.OpRequest) { op.Currency, op.Amount = "MGA", 150 }), "Amount"},
		"capture metadata beyond 45":        {capture(func(op *idempay.OpRequest) { op.Metadata = metadataOf(46) }), "Metadata"},
		"capture metadata with idempay_key": {capture(func(op *idempay.OpRequest) { op.Metadata = map[string]string{"idempay_key": "x"} }), "Metadata"},
		"capture with a reason":             {capture(func(op *idempay.OpRequest) { op.Reason = "x" }), "Reason"},
		"cancel reason not Stripe's":        {cancel(func(op *idempay.OpRequest) { op.Reason = "oops" }), "Reason"},
		"cancel with metadata":              {cancel(func(op *idempay.OpRequest) { op.Metadata = map[string]string{"a": "b"} }), "Metadata"},
		"API version with a space": {(stripe.Provider{APIVersion: "2024 06"}).ValidateOp(refundOp()),
			"Provider.APIVersion"},
	} {
		var ve *idempay.ValidationError
		if assert.ErrorAs(t, tc.err, &ve, name) {
			assert.Equal(t, tc.field, ve.Field, name)
		}
	}
}

// Through a Client, a refund Stripe would refuse is refused before
// anything is stored or sent.
func TestRefundRefusedBeforeStored(t *testing.T) {
	srv, c, _ := setup(t, nil)
	_, err := c.Charge(context.Background(), order("o", "pm_card_visa"))
	require.NoError(t, err)
	_, err = c.Refund(context.Background(), idempay.RefundRequest{RefundID: "rf", IntentID: "o", Amount: 100,
		Currency: "JPY", Reason: "because"})
	var ve *idempay.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Reason", ve.Field)
	_, err = c.Cancel(context.Background(), idempay.CancelRequest{CancelID: "cn", IntentID: "o", Metadata: map[string]string{"a": "b"}})
	require.ErrorAs(t, err, &ve)
	for rec, err := range c.UnresolvedOps(context.Background(), idempay.OpRefund) {
		t.Errorf("stored %v %v", rec, err)
	}
	assert.Zero(t, srv.Stats().Ops.Requests, "nothing sent")
	l, err := c.Ledger(context.Background(), "o")
	require.NoError(t, err)
	assert.Empty(t, l.Ops)
}
