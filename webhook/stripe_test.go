package webhook_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

func newStripe(t *testing.T, opts ...webhook.VerifierOption) *webhook.Stripe {
	t.Helper()
	v, err := webhook.NewStripe(stripeSecret, append([]webhook.VerifierOption{webhook.WithClock(func() time.Time { return epoch })}, opts...)...)
	require.NoError(t, err)
	return v
}

func stripeHeader(v string) http.Header {
	h := make(http.Header)
	h.Set(webhook.StripeSignatureHeader, v)
	return h
}

func TestStripeVerify(t *testing.T) {
	t.Parallel()
	body := idempaytest.StripeEvent("evt_1", "payment_intent.succeeded", map[string]any{"id": "pi_1"})
	v := newStripe(t)

	cases := []struct {
		name   string
		header http.Header
		body   []byte
		want   error // nil: accepted
	}{
		{"signed now", idempaytest.SignStripeWebhook(body, stripeSecret, epoch), body, nil},
		{"signed at the edge of the tolerance", idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(-webhook.DefaultTolerance)), body, nil},
		{"tampered body", idempaytest.SignStripeWebhook(body, stripeSecret, epoch), append([]byte(" "), body...), webhook.ErrBadSignature},
		{"wrong secret", idempaytest.SignStripeWebhook(body, "whsec_other", epoch), body, webhook.ErrBadSignature},
		{"old timestamp", idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(-webhook.DefaultTolerance-time.Second)), body, webhook.ErrTimestamp},
		{"future timestamp", idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(webhook.DefaultTolerance+time.Second)), body, webhook.ErrTimestamp},
		{"rotation: the second v1 matches", idempaytest.SignStripeWebhook(body, stripeRotated, epoch, stripeSecret), body, nil},
		{"no header", http.Header{}, body, webhook.ErrNoSignature},
		{"empty header", stripeHeader(" "), body, webhook.ErrNoSignature},
		{"only v0", stripeHeader("t=1767225600,v0=" + strings.Repeat("ab", 32)), body, webhook.ErrNoSignature},
		{"no timestamp", stripeHeader("v1=" + strings.Repeat("ab", 32)), body, webhook.ErrTimestamp},
		{"timestamp not a number", stripeHeader("t=17672256OO,v1=" + strings.Repeat("ab", 32)), body, webhook.ErrTimestamp},
		{"signed timestamp", stripeHeader("t=+1767225600,v1=" + strings.Repeat("ab", 32)), body, webhook.ErrTimestamp},
		{"two timestamps", stripeHeader("t=1,t=1767225600,v1=" + strings.Repeat("ab", 32)), body, webhook.ErrTimestamp},
		{"v1 not hex", stripeHeader("t=1767225600,v1=zz"), body, webhook.ErrBadSignature},
		{"v1 truncated", stripeHeader("t=1767225600,v1=abcd"), body, webhook.ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := v.Verify(c.header, c.body)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
			for _, other := range []error{webhook.ErrNoSignature, webhook.ErrBadSignature, webhook.ErrTimestamp} {
				if other != c.want {
					require.NotErrorIs(t, err, other, "one condition, one sentinel")
				}
			}
		})
	}
}

// The signature is judged before the age: an altered, stale request is a
// bad signature, and a *TimestampError always concerns a genuine one.
func TestStripeStaleTimestampIsTypedAndOnlyForGenuineRequests(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1"}`)
	v := newStripe(t)
	old := epoch.Add(-time.Hour)

	err := v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, old), body)
	var te *webhook.TimestampError
	require.ErrorAs(t, err, &te)
	require.Equal(t, old.Unix(), te.Signed.Unix())
	require.Equal(t, epoch, te.Now)
	require.Equal(t, webhook.DefaultTolerance, te.Tolerance)
	require.Contains(t, err.Error(), "1h0m0s before our clock")
	err = v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(10*time.Minute)), body)
	require.ErrorAs(t, err, &te)
	require.Contains(t, err.Error(), "10m0s after our clock", "a clock ahead is told apart from a replay")

	err = v.Verify(idempaytest.SignStripeWebhook(body, "whsec_other", old), body)
	require.ErrorIs(t, err, webhook.ErrBadSignature)
	require.False(t, errors.As(err, &te))
}

func TestStripeOptions(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1"}`)

	t.Run("WithTolerance", func(t *testing.T) {
		t.Parallel()
		v := newStripe(t, webhook.WithTolerance(time.Hour))
		require.NoError(t, v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(-59*time.Minute)), body))
		require.ErrorIs(t, v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(-61*time.Minute)), body), webhook.ErrTimestamp)
	})
	t.Run("WithPreviousSecret accepts both sides of our own rotation", func(t *testing.T) {
		t.Parallel()
		v, err := webhook.NewStripe(stripeRotated, webhook.WithPreviousSecret(stripeSecret), webhook.WithClock(func() time.Time { return epoch }))
		require.NoError(t, err)
		require.NoError(t, v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, epoch), body))
		require.NoError(t, v.Verify(idempaytest.SignStripeWebhook(body, stripeRotated, epoch), body))
		require.ErrorIs(t, v.Verify(idempaytest.SignStripeWebhook(body, "whsec_third", epoch), body), webhook.ErrBadSignature)
	})
	t.Run("bad options are refused", func(t *testing.T) {
		t.Parallel()
		for _, o := range []webhook.VerifierOption{webhook.WithTolerance(0), webhook.WithTolerance(-time.Second),
			webhook.WithClock(nil), webhook.WithPreviousSecret(""), nil} {
			_, err := webhook.NewStripe(stripeSecret, o)
			require.Error(t, err)
		}
		_, err := webhook.NewStripe("")
		require.Error(t, err)
	})
}

// The zero value has no key: it refuses everything, and says which way.
func TestStripeZeroValueRefuses(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1"}`)
	var zero webhook.Stripe
	require.ErrorIs(t, zero.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, time.Now()), body), webhook.ErrBadSignature)
	var nilStripe *webhook.Stripe
	require.ErrorIs(t, nilStripe.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, time.Now()), body), webhook.ErrBadSignature)
}

// Neither the secret nor the signature a verifier expects may appear in
// an error or in the verifier printed with any verb.
func TestStripeNeverRevealsSecrets(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1"}`)
	v := newStripe(t, webhook.WithPreviousSecret(stripeRotated))
	good := idempaytest.SignStripeWebhook(body, stripeSecret, epoch).Get(webhook.StripeSignatureHeader)
	expected := good[strings.Index(good, "v1=")+3:]

	var texts []string
	for _, h := range []string{"", "t=1767225600", "t=x,v1=00", "t=1767225600,v1=" + strings.Repeat("00", 32)} {
		if err := v.Verify(stripeHeader(h), body); err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v %#v", err, err))
		}
	}
	err := v.Verify(idempaytest.SignStripeWebhook(body, stripeSecret, epoch.Add(-time.Hour)), body)
	require.Error(t, err)
	texts = append(texts, err.Error(), fmt.Sprintf("%v %+v %#v", v, v, v), fmt.Sprintf("%v %+v %#v", *v, *v, *v))
	for _, s := range texts {
		for _, secret := range []string{stripeSecret.Reveal(), stripeRotated.Reveal(), "whsec_", expected} {
			require.NotContains(t, s, secret)
		}
	}
}
