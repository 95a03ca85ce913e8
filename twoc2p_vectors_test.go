package idempay_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/stretchr/testify/require"
)

// The test vectors: a fixed secret and payload give a fixed JWT. The expected values were computed once with idempay's
// code and checked with Python's hmac module before being written here;
// TestTwoC2PVectorsNode re-checks them with Node's crypto on every run.
const (
	tc2pVectorSecret = "idempay-vector-secret"

	// tc2pVectorClaims is the builder's output for tc2pVectorPayload,
	// written out by hand: field names, order and the amount as a number.
	tc2pVectorClaims = `{"merchantID":"JT01","invoiceNo":"3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17",` +
		`"description":"Order 3f2c9a1e","amount":1234.56,"currencyCode":"THB","paymentChannel":["CC"],` +
		`"idempotencyID":"6c0d2b4e-9a8f-4c71-b5e3-0f1a2d3c4b5a","request3DS":"Y",` +
		`"frontendReturnUrl":"https://shop.example/return","backendReturnUrl":"https://shop.example/2c2p/notify",` +
		`"userDefined1":"cart-42"}`

	tc2pVectorJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJtZXJjaGFudElEIjoiSlQwMSIsImludm9pY2VObyI6IjNmMmM5YTFlN2I0ZDRlOGE5YzFmMmE2YjhkMGU0ZjE3Iiwi" +
		"ZGVzY3JpcHRpb24iOiJPcmRlciAzZjJjOWExZSIsImFtb3VudCI6MTIzNC41NiwiY3VycmVuY3lDb2RlIjoiVEhCIiwi" +
		"cGF5bWVudENoYW5uZWwiOlsiQ0MiXSwiaWRlbXBvdGVuY3lJRCI6IjZjMGQyYjRlLTlhOGYtNGM3MS1iNWUzLTBmMWEy" +
		"ZDNjNGI1YSIsInJlcXVlc3QzRFMiOiJZIiwiZnJvbnRlbmRSZXR1cm5VcmwiOiJodHRwczovL3Nob3AuZXhhbXBsZS9y" +
		"ZXR1cm4iLCJiYWNrZW5kUmV0dXJuVXJsIjoiaHR0cHM6Ly9zaG9wLmV4YW1wbGUvMmMycC9ub3RpZnkiLCJ1c2VyRGVm" +
		"aW5lZDEiOiJjYXJ0LTQyIn0." +
		"l1yDcCFvXMM64g6FakKDTIReRnNi-NOvV2lRrppfCms"
)

var tc2pVectorPayload = idempay.TwoC2PPaymentToken{
	MerchantID:        "JT01",
	InvoiceNo:         "3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", // TwoC2PInvoiceNo of this alphanumeric intent ID
	Description:       "Order 3f2c9a1e",
	Amount:            123456,
	Currency:          "thb",
	PaymentChannel:    []string{"CC"},
	IdempotencyID:     "6c0d2b4e-9a8f-4c71-b5e3-0f1a2d3c4b5a",
	Request3DS:        "Y",
	FrontendReturnURL: "https://shop.example/return",
	BackendReturnURL:  "https://shop.example/2c2p/notify",
	UserDefined:       [5]string{"cart-42"},
}

func TestTwoC2PVectorJWT(t *testing.T) {
	inv, err := idempay.TwoC2PInvoiceNo("3f2c9a1e7b4d4e8a9c1f2a6b8d0e4f17", false)
	require.NoError(t, err)
	require.Equal(t, tc2pVectorPayload.InvoiceNo, inv)

	claims, err := tc2pVectorPayload.JSON()
	require.NoError(t, err)
	require.Equal(t, tc2pVectorClaims, string(claims), "the claims the builder produces")

	tok, err := tc2pVectorPayload.Sign(tc2pVectorSecret)
	require.NoError(t, err)
	require.Equal(t, tc2pVectorJWT, tok, "the JWT is reproducible byte for byte")

	// An independent HS256 in Go (crypto/hmac, not golang-jwt).
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	require.Equal(t, twoc2ptest.Segment([]byte(`{"alg":"HS256","typ":"JWT"}`)), parts[0])
	require.Equal(t, twoc2ptest.Segment([]byte(tc2pVectorClaims)), parts[1])
	m := hmac.New(sha256.New, []byte(tc2pVectorSecret))
	m.Write([]byte(parts[0] + "." + parts[1]))
	require.Equal(t, twoc2ptest.Segment(m.Sum(nil)), parts[2])

	body, err := tc2pVectorPayload.Body(tc2pVectorSecret)
	require.NoError(t, err)
	require.JSONEq(t, `{"payload":"`+tc2pVectorJWT+`"}`, string(body))

	got, err := idempay.TwoC2PSigner{Secret: tc2pVectorSecret}.Verify(tc2pVectorJWT)
	require.NoError(t, err)
	require.Equal(t, tc2pVectorClaims, string(got))
}

// tc2pNodeScript recomputes HMAC-SHA256 with Node's crypto module: argv
// is the secret, the message and the output encoding.
const tc2pNodeScript = `const c = require("crypto");
const [secret, msg, enc] = process.argv.slice(1);
process.stdout.write(c.createHmac("sha256", secret).update(msg, "utf8").digest(enc));`

// TestTwoC2PVectorsNode checks the vectors with a second implementation
// of HMAC-SHA256 and base64url: Node's crypto.createHmac.
func TestTwoC2PVectorsNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required on CI to check the 2C2P vectors independently: %v", err)
		}
		t.Skipf("node not found (%v): the 2C2P vectors are not checked by an independent implementation", err)
	}
	run := func(msg, enc string) string {
		out, err := exec.Command(node, "-e", tc2pNodeScript, tc2pVectorSecret, msg, enc).Output()
		require.NoError(t, err, "node -e")
		return string(out)
	}
	i := strings.LastIndexByte(tc2pVectorJWT, '.')
	require.Equal(t, tc2pVectorJWT[i+1:], run(tc2pVectorJWT[:i], "base64url"), "JWT signature per Node")

	// And a token the code signs now, not only the checked-in one.
	p := tc2pVectorPayload
	p.Description = "ฟ้า & <tea>" // non-ASCII and characters encoding/json escapes
	tok, err := p.Sign(tc2pVectorSecret)
	require.NoError(t, err)
	i = strings.LastIndexByte(tok, '.')
	require.Equal(t, tok[i+1:], run(tok[:i], "base64url"))
}
