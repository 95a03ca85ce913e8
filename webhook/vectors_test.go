package webhook_test

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest"
	"github.com/idempay/idempay/webhook"
	"github.com/stretchr/testify/require"
)

// Fixed vectors. The signatures were computed with Python's hmac module
// (not with this package or idempaytest) before any of the Go code was
// written; TestVectorsNode recomputes them with Node's crypto on each
// run. The bodies hold non-ASCII text and characters JSON encoders like to
// escape, so a verifier that re-encodes or transcodes the body fails.
const (
	vectorTime = 1767225600 // 2026-01-01T00:00:00Z

	stripeVectorBody = `{"id":"evt_1IdempayVector","object":"event","type":"payment_intent.succeeded",` +
		`"data":{"object":{"id":"pi_1","description":"ฟ้า & <tea>"}}}`
	stripeVectorSig        = "b1f78afcc70520cabe190f8c347db29cd63418ab605aad44cc4e725a1444ebf5" // key stripeSecret
	stripeVectorSigRotated = "b0dca91b7242edab38f7a484c7aaae523b7901a3c06c29bd4e0a906bc740c98d" // key stripeRotated

	omiseVectorBody = `{"object":"event","id":"evnt_test_idempayvector","key":"charge.complete",` +
		`"data":{"object":"charge","id":"chrg_test_1","description":"ฟ้า & <tea>"}}`
	omiseVectorSig        = "cb46d1e4371d7ca5277a09da029246ca787f4ea54a718e3c3b1502c809b2a295" // key base64-decoded omiseSecret
	omiseVectorSigRotated = "a2c7a0d030362c51933e5d5e5afbbcc2f848876b9e4a34ba8540ed7292b6a8f9" // key base64-decoded omiseRotated
)

func TestVectorsVerify(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Unix(vectorTime, 0) }
	ts := strconv.Itoa(vectorTime)

	s, err := webhook.NewStripe(stripeSecret, webhook.WithClock(now))
	require.NoError(t, err)
	require.NoError(t, s.Verify(stripeHeader("t="+ts+",v1="+stripeVectorSig), []byte(stripeVectorBody)))
	require.NoError(t, s.Verify(stripeHeader("t="+ts+",v1="+stripeVectorSigRotated+",v1="+stripeVectorSig), []byte(stripeVectorBody)))
	require.ErrorIs(t, s.Verify(stripeHeader("t="+ts+",v1="+stripeVectorSigRotated), []byte(stripeVectorBody)), webhook.ErrBadSignature)

	o, err := webhook.NewOmise(omiseSecret, webhook.WithClock(now))
	require.NoError(t, err)
	h := make(map[string][]string)
	h[webhook.OmiseSignatureHeader] = []string{omiseVectorSigRotated + "," + omiseVectorSig}
	h[webhook.OmiseTimestampHeader] = []string{ts}
	require.NoError(t, o.Verify(h, []byte(omiseVectorBody)))
}

// The test kit signs exactly as the vectors say, so consumers' tests sign
// as the providers do.
func TestVectorsSigners(t *testing.T) {
	t.Parallel()
	at := time.Unix(vectorTime, 0)
	got := idempaytest.SignStripeWebhook([]byte(stripeVectorBody), stripeSecret, at, stripeRotated)
	require.Equal(t, "t=1767225600,v1="+stripeVectorSig+",v1="+stripeVectorSigRotated, got.Get("Stripe-Signature"))

	got = idempaytest.SignOmiseWebhook([]byte(omiseVectorBody), omiseSecret, at, omiseRotated)
	require.Equal(t, omiseVectorSig+","+omiseVectorSigRotated, got.Get("Omise-Signature"))
	require.Equal(t, "1767225600", got.Get("Omise-Signature-Timestamp"))
}

// nodeHMAC is HMAC-SHA256 in Node: argv is the key (hex), the timestamp
// and the body; the output is the hex signature of timestamp "." body.
const nodeHMAC = `const c = require("crypto");
const [key, ts, body] = process.argv.slice(1);
process.stdout.write(c.createHmac("sha256", Buffer.from(key, "hex")).update(ts + "." + body, "utf8").digest("hex"));`

// TestVectorsNode checks the vectors with a second implementation of
// HMAC-SHA256 and base64: Node's crypto and Buffer. Without node it is
// skipped, except under CI (CI=true), where it fails: there the vectors
// must be proven by something other than Go.
func TestVectorsNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required under CI to check the webhook vectors independently: %v", err)
		}
		t.Skipf("node not found (%v): the webhook vectors are not checked by an independent implementation", err)
	}
	sign := func(key []byte, body string) string {
		out, err := exec.Command(node, "-e", nodeHMAC, hex.EncodeToString(key), strconv.Itoa(vectorTime), body).Output()
		require.NoError(t, err, "node -e")
		return string(out)
	}
	omiseKey := func(s string) []byte {
		out, err := exec.Command(node, "-e", `process.stdout.write(Buffer.from(process.argv[1], "base64").toString("hex"))`, s).Output()
		require.NoError(t, err)
		b, err := hex.DecodeString(string(out))
		require.NoError(t, err)
		return b
	}
	require.Equal(t, stripeVectorSig, sign([]byte(stripeSecret.Reveal()), stripeVectorBody))
	require.Equal(t, stripeVectorSigRotated, sign([]byte(stripeRotated.Reveal()), stripeVectorBody))
	require.Equal(t, omiseVectorSig, sign(omiseKey(omiseSecret.Reveal()), omiseVectorBody))
	require.Equal(t, omiseVectorSigRotated, sign(omiseKey(omiseRotated.Reveal()), omiseVectorBody))

	// Node's base64 and Go's agree on the key, not only on the result.
	k, err := base64.StdEncoding.DecodeString(omiseSecret.Reveal())
	require.NoError(t, err)
	require.Equal(t, k, omiseKey(omiseSecret.Reveal()))
}
