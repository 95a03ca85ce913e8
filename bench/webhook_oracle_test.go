package bench_test

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
)

// The webhook verifier's oracle test lives here, beside the benchmarks,
// because it needs stripe-go, which the SDK's own module does not require.
const (
	stripeSecret  idempay.Secret = "whsec_idempay_vector_secret"
	stripeRotated idempay.Secret = "whsec_idempay_vector_rotated"
)

func stripeHeader(v string) http.Header {
	h := make(http.Header)
	h.Set(webhook.StripeSignatureHeader, v)
	return h
}

// oracleHeader is the Stripe-Signature header stripe-go's own signer makes
// for body at t, with one v1 value per secret, in order.
func oracleHeader(body []byte, t time.Time, secrets ...idempay.Secret) string {
	h := fmt.Sprintf("t=%d", t.Unix())
	for _, s := range secrets {
		h += ",v1=" + hex.EncodeToString(stripewebhook.ComputeSignature(t, body, s.Reveal()))
	}
	return h
}

// TestStripeVerifyAgainstStripeGo checks the verifier against stripe-go's
// signer and verifier as an oracle: what stripe-go signs, the verifier
// accepts or refuses as stripe-go's ValidatePayload does, and what
// idempaytest signs, stripe-go accepts.
func TestStripeVerifyAgainstStripeGo(t *testing.T) {
	t.Parallel()
	body := idempaytest.StripeEvent("evt_oracle", "payment_intent.payment_failed", map[string]any{"id": "pi_1"})
	now := time.Now()
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{
		Payload: body, Secret: stripeSecret.Reveal(), Timestamp: now})
	rotating, err := webhook.NewStripe(stripeRotated, webhook.WithPreviousSecret(stripeSecret))
	require.NoError(t, err)
	plain, err := webhook.NewStripe(stripeSecret)
	require.NoError(t, err)

	for _, tc := range []struct {
		name     string
		verifier *webhook.Stripe
		header   string
		body     []byte
		secret   idempay.Secret // stripe-go's view, with this secret
		want     error
	}{
		{"valid", plain, signed.Header, body, stripeSecret, nil},
		{"rotated secret: signed with the previous one", rotating, signed.Header, body, stripeSecret, nil},
		{"rotated secret: signed with the new one", rotating, oracleHeader(body, now, stripeRotated), body, stripeRotated, nil},
		{"several v1 values, the last matches", plain, oracleHeader(body, now, stripeRotated, "whsec_x", stripeSecret), body, stripeSecret, nil},
		{"several v1 values, none matches", plain, oracleHeader(body, now, stripeRotated, "whsec_x"), body, stripeSecret, webhook.ErrBadSignature},
		{"tampered body", plain, signed.Header, append(append([]byte{}, body...), ' '), stripeSecret, webhook.ErrBadSignature},
		{"tampered signature", plain, fmt.Sprintf("t=%d,v1=%s", now.Unix(), hex.EncodeToString(make([]byte, 32))), body, stripeSecret, webhook.ErrBadSignature},
		{"stale", plain, oracleHeader(body, now.Add(-stripewebhook.DefaultTolerance-time.Minute), stripeSecret), body, stripeSecret, webhook.ErrTimestamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.verifier.Verify(stripeHeader(tc.header), tc.body)
			oracle := stripewebhook.ValidatePayload(tc.body, tc.header, tc.secret.Reveal())
			if tc.want == nil {
				assert.NoError(t, err)
				assert.NoError(t, oracle, "stripe-go agrees")
				return
			}
			assert.ErrorIs(t, err, tc.want)
			assert.Error(t, oracle, "stripe-go agrees")
		})
	}

	// And the other way: what idempaytest signs, stripe-go verifies,
	// rotation included.
	h := idempaytest.SignStripeWebhook(body, stripeRotated, now, stripeSecret).Get(webhook.StripeSignatureHeader)
	assert.NoError(t, stripewebhook.ValidatePayload(body, h, stripeSecret.Reveal()))
	assert.NoError(t, stripewebhook.ValidatePayload(body, h, stripeRotated.Reveal()))
	assert.Error(t, stripewebhook.ValidatePayload(body, h, "whsec_other"))
}
