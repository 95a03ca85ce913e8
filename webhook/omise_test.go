package webhook_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

func newOmise(t *testing.T, opts ...webhook.VerifierOption) *webhook.Omise {
	t.Helper()
	v, err := webhook.NewOmise(omiseSecret, append([]webhook.VerifierOption{webhook.WithClock(func() time.Time { return epoch })}, opts...)...)
	require.NoError(t, err)
	return v
}

func TestOmiseVerify(t *testing.T) {
	t.Parallel()
	body := idempaytest.OmiseEvent("evnt_test_1", "charge.complete", map[string]any{"object": "charge", "id": "chrg_test_1"})
	v := newOmise(t)
	signed := idempaytest.SignOmiseWebhook(body, omiseSecret, epoch)
	with := func(k, val string) http.Header {
		h := signed.Clone()
		if val == "" {
			h.Del(k)
		} else {
			h.Set(k, val)
		}
		return h
	}

	cases := []struct {
		name   string
		header http.Header
		body   []byte
		want   error
	}{
		{"signed now", signed, body, nil},
		{"tampered body", signed, []byte(strings.Replace(string(body), "chrg_test_1", "chrg_test_2", 1)), webhook.ErrBadSignature},
		{"wrong secret", idempaytest.SignOmiseWebhook(body, omiseRotated, epoch), body, webhook.ErrBadSignature},
		{"old timestamp", idempaytest.SignOmiseWebhook(body, omiseSecret, epoch.Add(-10*time.Minute)), body, webhook.ErrTimestamp},
		{"timestamp header altered", with(webhook.OmiseTimestampHeader, "1767225601"), body, webhook.ErrBadSignature},
		{"rotation: the second signature matches", idempaytest.SignOmiseWebhook(body, omiseRotated, epoch, omiseSecret), body, nil},
		{"rotation with spaces", with(webhook.OmiseSignatureHeader, strings.Repeat("0", 64)+", "+signed.Get(webhook.OmiseSignatureHeader)), body, nil},
		{"no signature header", with(webhook.OmiseSignatureHeader, ""), body, webhook.ErrNoSignature},
		{"no timestamp header", with(webhook.OmiseTimestampHeader, ""), body, webhook.ErrTimestamp},
		{"timestamp in milliseconds", with(webhook.OmiseTimestampHeader, "1767225600000"), body, webhook.ErrBadSignature},
		{"timestamp not a number", with(webhook.OmiseTimestampHeader, "yesterday"), body, webhook.ErrTimestamp},
		{"signature not hex", with(webhook.OmiseSignatureHeader, "not-hex"), body, webhook.ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := v.Verify(c.header, c.body)
			if c.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, c.want)
			}
		})
	}
}

func TestOmiseSecrets(t *testing.T) {
	t.Parallel()
	body := []byte(`{"object":"event","id":"evnt_1"}`)

	t.Run("unpadded base64 is the same secret", func(t *testing.T) {
		t.Parallel()
		v, err := webhook.NewOmise(idempay.Secret(strings.TrimRight(omiseSecret.Reveal(), "=")), webhook.WithClock(func() time.Time { return epoch }))
		require.NoError(t, err)
		require.NoError(t, v.Verify(idempaytest.SignOmiseWebhook(body, omiseSecret, epoch), body))
	})
	t.Run("WithPreviousSecret", func(t *testing.T) {
		t.Parallel()
		v, err := webhook.NewOmise(omiseRotated, webhook.WithPreviousSecret(omiseSecret), webhook.WithClock(func() time.Time { return epoch }))
		require.NoError(t, err)
		require.NoError(t, v.Verify(idempaytest.SignOmiseWebhook(body, omiseSecret, epoch), body))
		require.NoError(t, v.Verify(idempaytest.SignOmiseWebhook(body, omiseRotated, epoch), body))
	})
	t.Run("bad secrets are refused without being quoted", func(t *testing.T) {
		t.Parallel()
		const notB64 idempay.Secret = "this is not base64!"
		for _, c := range []struct {
			secret idempay.Secret
			opts   []webhook.VerifierOption
		}{
			{"", nil},
			{notB64, nil},
			{omiseSecret, []webhook.VerifierOption{webhook.WithPreviousSecret(notB64)}},
		} {
			_, err := webhook.NewOmise(c.secret, c.opts...)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "this is not")
		}
	})
	t.Run("the zero value refuses", func(t *testing.T) {
		t.Parallel()
		var zero webhook.Omise
		require.ErrorIs(t, zero.Verify(idempaytest.SignOmiseWebhook(body, omiseSecret, time.Now()), body), webhook.ErrBadSignature)
	})
	t.Run("nothing secret is printed", func(t *testing.T) {
		t.Parallel()
		v := newOmise(t)
		signed := idempaytest.SignOmiseWebhook(body, omiseSecret, epoch.Add(-time.Hour))
		err := v.Verify(signed, body)
		require.ErrorIs(t, err, webhook.ErrTimestamp)
		out := fmt.Sprintf("%v %+v %#v %v %+v", v, v, v, *v, err)
		require.NotContains(t, out, omiseSecret.Reveal())
		require.NotContains(t, out, "idempay omise")
		require.NotContains(t, out, signed.Get(webhook.OmiseSignatureHeader))
	})
}
