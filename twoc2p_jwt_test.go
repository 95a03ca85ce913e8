package idempay_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tc2pNow is the fixed clock of the expiry tests: 2025-01-01T00:00:00Z.
var tc2pNow = time.Unix(1735689600, 0)

func TestTwoC2PVerifyRejects(t *testing.T) {
	const claims = `{"respCode":"0000","respDesc":"Success","paymentToken":"tok"}`
	key := []byte(tc2pSecret.Reveal())
	good := tc2pHS256(claims)
	parts := strings.Split(good, ".")
	hs256 := `{"alg":"HS256","typ":"JWT"}`

	cases := []struct {
		name  string
		token string
		is    error // a golang-jwt sentinel also in the chain, if any
	}{
		{"tampered payload", parts[0] + "." + tc2pB64([]byte(strings.Replace(claims, "tok", "tak", 1))) + "." + parts[2], jwt.ErrTokenSignatureInvalid},
		{"tampered header", tc2pB64([]byte(`{"alg":"HS256","typ":"JWT","kid":"x"}`)) + "." + parts[1] + "." + parts[2], jwt.ErrTokenSignatureInvalid},
		{"tampered signature", parts[0] + "." + parts[1] + "." + tc2pB64(make([]byte, 32)), jwt.ErrTokenSignatureInvalid},
		{"no signature", parts[0] + "." + parts[1] + ".", jwt.ErrTokenSignatureInvalid},
		{"wrong key", tc2pForge(hs256, claims, []byte("another-merchant-secret"), sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg none, no signature", tc2pForge(`{"alg":"none","typ":"JWT"}`, claims, nil, nil), jwt.ErrTokenSignatureInvalid},
		{"alg none, with signature", tc2pForge(`{"alg":"none","typ":"JWT"}`, claims, key, sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg NONE", tc2pForge(`{"alg":"NONE"}`, claims, nil, nil), nil},
		{"alg HS512, right key", tc2pForge(`{"alg":"HS512","typ":"JWT"}`, claims, key, sha512.New), jwt.ErrTokenSignatureInvalid},
		{"alg HS384, right key", tc2pForge(`{"alg":"HS384","typ":"JWT"}`, claims, key, sha512.New384), jwt.ErrTokenSignatureInvalid},
		{"alg RS256 header over an HMAC", tc2pForge(`{"alg":"RS256","typ":"JWT"}`, claims, key, sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg missing", tc2pForge(`{"typ":"JWT"}`, claims, key, sha256.New), nil},
		{"expired", tc2pHS256(`{"respCode":"0000","exp":1735689599}`), jwt.ErrTokenExpired},
		{"expired long ago", tc2pHS256(`{"respCode":"0000","exp":1000}`), jwt.ErrTokenExpired},
		{"not valid yet", tc2pHS256(`{"respCode":"0000","nbf":1735689700}`), jwt.ErrTokenNotValidYet},
		{"exp not a number", tc2pHS256(`{"respCode":"0000","exp":"tomorrow"}`), jwt.ErrInvalidType},
		{"two segments", parts[0] + "." + parts[1], jwt.ErrTokenMalformed},
		{"four segments", good + ".x", jwt.ErrTokenMalformed},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], jwt.ErrTokenMalformed},
		{"payload not JSON", parts[0] + "." + tc2pB64([]byte("not json")) + "." + parts[2], jwt.ErrTokenMalformed},
		{"empty", "", jwt.ErrTokenMalformed},
		// The same bytes in a second spelling: base64's unused low bits set.
		{"signature with unused bits set", parts[0] + "." + parts[1] + "." + tc2pLaxB64(t, parts[2]), jwt.ErrTokenMalformed},
		{"claims with unused bits set", tc2pForgeSegments(tc2pB64([]byte(hs256)), tc2pLaxB64(t, tc2pB64([]byte(claims+" "))), key), jwt.ErrTokenMalformed},
	}
	s := idempay.TwoC2PSigner{Secret: tc2pSecret, Now: func() time.Time { return tc2pNow }}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Verify(tc.token)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, idempay.ErrTwoC2PSignature)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.NotContains(t, err.Error(), tc2pSecret.Reveal(), "errors never carry the secret")

			// And as an answer body, it never reads as anything.
			_, err = s.ParseResponse(tc2pBody(tc.token))
			assert.ErrorIs(t, err, idempay.ErrTwoC2PSignature)
		})
	}
}

// tc2pLaxB64 respells an unpadded base64url segment with the unused low
// bits of its last character set: a decoder that is not strict reads the
// same bytes from it.
func tc2pLaxB64(t *testing.T, seg string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	require.NotZero(t, len(seg)%4, "segment %q has no unused bits", seg)
	last := strings.IndexByte(alphabet, seg[len(seg)-1])
	lax := seg[:len(seg)-1] + string(alphabet[last|1])
	require.NotEqual(t, seg, lax, "segment %q already has its unused bits set", seg)
	return lax
}

// tc2pForgeSegments signs header.claims as they are spelled, with HS256.
func tc2pForgeSegments(header, claims string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(header + "." + claims))
	return header + "." + claims + "." + tc2pB64(m.Sum(nil))
}

func TestTwoC2PVerifyAccepts(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pSecret, Now: func() time.Time { return tc2pNow }}
	for _, claims := range []string{
		`{"respCode":"0000"}`,
		`{"respCode":"0000","exp":1735689601}`, // expires a second from now
		`{"respCode":"0000","nbf":1735689600,"iat":1735689000}`,
		`{"respCode":"0000","amount":12345678901234567890.5}`, // no float64 on the way
	} {
		got, err := s.Verify(tc2pHS256(claims))
		require.NoError(t, err, claims)
		require.Equal(t, claims, string(got))
	}
	// golang-jwt's own HS256 output verifies too.
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"respCode": "0000"}).SignedString([]byte(tc2pSecret.Reveal()))
	require.NoError(t, err)
	_, err = s.Verify(tok)
	require.NoError(t, err)
}

func TestTwoC2PNoSecret(t *testing.T) {
	var s idempay.TwoC2PSigner
	_, err := s.Sign([]byte(`{}`))
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
	_, err = s.Verify(tc2pHS256(`{}`))
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
	_, err = s.ParseResponse([]byte(`{"respCode":"9004"}`))
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
	_, _, err = s.LegacySign(map[string]string{})
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
	_, err = tc2pVectorPayload.Sign("")
	require.ErrorIs(t, err, idempay.ErrTwoC2PNoSecret)
}

func TestTwoC2PSignRefusesNonObjects(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pSecret}
	for _, c := range []string{``, `[]`, `"x"`, `{`, `null`} {
		_, err := s.Sign([]byte(c))
		require.ErrorIs(t, err, idempay.ErrInvalidRequest, c)
	}
}

func TestTwoC2PParseResponse(t *testing.T) {
	s := idempay.TwoC2PSigner{Secret: tc2pSecret}
	signed := tc2pBody(tc2pHS256(`{"webPaymentUrl":"https://pay.example/t","paymentToken":"tok","respCode":"0000","respDesc":"Success"}`))
	r, err := s.ParseResponse(signed)
	require.NoError(t, err)
	assert.True(t, r.Signed)
	assert.Equal(t, "0000", r.RespCode)
	assert.Equal(t, "tok", r.PaymentToken)
	assert.Equal(t, "https://pay.example/t", r.WebPaymentURL)

	r, err = s.ParseResponse(tc2pBody(tc2pHS256(`{"invoiceNo":"A1","amount":1234.50,"currencyCode":"THB","respCode":"0000"}`)))
	require.NoError(t, err)
	assert.Equal(t, "1234.50", r.Amount, "a number amount keeps its text")
	r, err = s.ParseResponse(tc2pBody(tc2pHS256(`{"amount":"1234.50","respCode":"0001"}`)))
	require.NoError(t, err)
	assert.Equal(t, "1234.50", r.Amount, "a string amount too")

	// The plain error form.
	r, err = s.ParseResponse([]byte(` {"respCode":"9015","respDesc":"Existing Invoice Number"} `))
	require.NoError(t, err)
	assert.False(t, r.Signed)
	assert.Equal(t, "9015", r.RespCode)

	refused := []struct {
		name, body string
		is         error
	}{
		{"unsigned success", `{"respCode":"0000","respDesc":"Success","paymentToken":"tok"}`, idempay.ErrTwoC2PUnsigned},
		{"unsigned pending", `{"respCode":"0001"}`, idempay.ErrTwoC2PUnsigned},
		{"unsigned in progress", `{"respCode":"2001"}`, idempay.ErrTwoC2PUnsigned},
		{"unsigned tokenised", `{"respCode":"4200"}`, idempay.ErrTwoC2PUnsigned},
		{"unsigned, claiming Signed", `{"respCode":"0000","Signed":true}`, idempay.ErrTwoC2PUnsigned},
		{"bad payload beside a plain code", `{"payload":"x.y.z","respCode":"9004"}`, idempay.ErrTwoC2PSignature},
		{"payload not a string", `{"payload":1}`, idempay.ErrTwoC2PMalformed},
		{"neither form", `{"status":"ok"}`, idempay.ErrTwoC2PMalformed},
		{"not JSON", `<html>502</html>`, idempay.ErrTwoC2PMalformed},
		{"array", `[{"respCode":"9004"}]`, idempay.ErrTwoC2PMalformed},
		{"null", `null`, idempay.ErrTwoC2PMalformed},
		{"respCode a number", `{"respCode":9004}`, idempay.ErrTwoC2PMalformed},
		{"signed claims not an object", string(tc2pBody(tc2pHS256(`["0000"]`))), idempay.ErrTwoC2PSignature},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ParseResponse([]byte(tc.body))
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.is), "%v is not %v", err, tc.is)
		})
	}
}
