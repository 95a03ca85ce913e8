package twoc2p_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const redirectSecret idempay.Secret = "redirect-vector-secret"

// The vectors follow what 2C2P's WooCommerce plugin documents in its code
// (Includes/wc-2c2p-hash-helper.php): hash_value is hash_hmac('sha1', the
// field values concatenated in its order, secret). The expected hashes
// were computed with Python's hmac module over the concatenations written
// out below.
var (
	redirectRequest = map[string]string{
		"version": "7.0", "merchant_id": "JT01", "payment_description": "Order 1001", "order_id": "1001",
		"currency": "764", "amount": "000000150000", "customer_email": "buyer@example.com",
		"user_defined_1": "cart-42", "result_url_1": "https://shop.example/return",
		"result_url_2": "https://shop.example/notify", "request_3ds": "", "payment_expiry": "2026-12-02 10:00:00",
	}
	redirectRequestSigned = "7.0JT01Order 10011001764000000150000buyer@example.comcart-42" +
		"https://shop.example/returnhttps://shop.example/notify2026-12-02 10:00:00"
	redirectRequestHash = "fda97cc268896c74755faeb79e216f2b00cd7669"

	redirectResponse = map[string]string{
		"version": "7.0", "request_timestamp": "2026-12-01 10:05:00", "merchant_id": "JT01", "order_id": "1001",
		"currency": "764", "amount": "000000150000", "transaction_ref": "7654321", "approval_code": "123456",
		"eci": "05", "transaction_datetime": "2026-12-01 10:04:58", "payment_channel": "001",
		"payment_status": "000", "channel_response_code": "00", "channel_response_desc": "success",
		"masked_pan": "411111XXXXXX1111", "user_defined_1": "cart-42",
		"hash_value": "722ded7dc3075d228f8f94dfefdd051ecbdc726a",
	}
)

// TestRedirectHashVector: the request's hash_value is the plugin's
// HMAC-SHA1 of its values in the plugin's order, and a response's verifies
// the same way.
func TestRedirectHashVector(t *testing.T) {
	got, err := twoc2p.RedirectRequestHash(redirectSecret, redirectRequest)
	require.NoError(t, err)
	assert.Equal(t, redirectRequestHash, got)
	m := hmac.New(sha1.New, []byte(redirectSecret.Reveal()))
	m.Write([]byte(redirectRequestSigned))
	assert.Equal(t, hex.EncodeToString(m.Sum(nil)), got, "independent HMAC-SHA1 of the concatenation")

	require.NoError(t, twoc2p.VerifyRedirectResponse(redirectSecret, "7.0", redirectResponse))
	upper := cloneFields(redirectResponse)
	upper["hash_value"] = strings.ToUpper(upper["hash_value"])
	assert.NoError(t, twoc2p.VerifyRedirectResponse(redirectSecret, "7.0", upper), "letter case of the hex ignored")
}

func cloneFields(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestRedirectHashRefuses(t *testing.T) {
	extra := cloneFields(redirectRequest)
	extra["customer_name"] = "x"
	_, err := twoc2p.RedirectRequestHash(redirectSecret, extra)
	assert.ErrorIs(t, err, twoc2p.ErrRedirectField, "a field the hash would not cover")
	v85 := cloneFields(redirectRequest)
	v85["version"] = "8.5"
	_, err = twoc2p.RedirectRequestHash(redirectSecret, v85)
	assert.ErrorIs(t, err, twoc2p.ErrRedirectVersion)
	_, err = twoc2p.RedirectRequestHash("", redirectRequest)
	assert.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)

	for name, mod := range map[string]func(map[string]string){
		"tampered amount": func(f map[string]string) { f["amount"] = "000000000100" },
		"tampered status": func(f map[string]string) { f["payment_status"] = "001" },
		"no hash":         func(f map[string]string) { delete(f, "hash_value") },
		"hash not hex":    func(f map[string]string) { f["hash_value"] = "zz" },
		"short hash":      func(f map[string]string) { f["hash_value"] = f["hash_value"][:20] },
	} {
		f := cloneFields(redirectResponse)
		mod(f)
		err := twoc2p.VerifyRedirectResponse(redirectSecret, "7.0", f)
		assert.ErrorIs(t, err, twoc2p.ErrRedirectHash, name)
		if err != nil {
			assert.NotContains(t, err.Error(), redirectSecret.Reveal(), name)
		}
	}
	assert.ErrorIs(t, twoc2p.VerifyRedirectResponse("other-secret", "7.0", redirectResponse), twoc2p.ErrRedirectHash)
	assert.ErrorIs(t, twoc2p.VerifyRedirectResponse(redirectSecret, "8.5", redirectResponse), twoc2p.ErrRedirectVersion)
	// A field outside the order is not covered, so changing it changes nothing.
	f := cloneFields(redirectResponse)
	f["note"] = "anything"
	assert.NoError(t, twoc2p.VerifyRedirectResponse(redirectSecret, "7.0", f))
}

func TestRedirectAmount(t *testing.T) {
	for minor, want := range map[int64]string{150000: "000000150000", 0: "000000000000", 999_999_999_999: "999999999999"} {
		got, err := twoc2p.RedirectAmount(minor)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	for _, bad := range []int64{-1, 1_000_000_000_000} {
		_, err := twoc2p.RedirectAmount(bad)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest)
	}
}
