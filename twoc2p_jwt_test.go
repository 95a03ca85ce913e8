package idempay_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
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
		{"tampered payload", parts[0] + "." + twoc2ptest.Segment([]byte(strings.Replace(claims, "tok", "tak", 1))) + "." + parts[2], jwt.ErrTokenSignatureInvalid},
		{"tampered header", twoc2ptest.Segment([]byte(`{"alg":"HS256","typ":"JWT","kid":"x"}`)) + "." + parts[1] + "." + parts[2], jwt.ErrTokenSignatureInvalid},
		{"tampered signature", parts[0] + "." + parts[1] + "." + twoc2ptest.Segment(make([]byte, 32)), jwt.ErrTokenSignatureInvalid},
		{"no signature", parts[0] + "." + parts[1] + ".", jwt.ErrTokenSignatureInvalid},
		{"wrong key", twoc2ptest.Forge(hs256, claims, []byte("another-merchant-secret"), sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg none, no signature", twoc2ptest.Forge(`{"alg":"none","typ":"JWT"}`, claims, nil, nil), jwt.ErrTokenSignatureInvalid},
		{"alg none, with signature", twoc2ptest.Forge(`{"alg":"none","typ":"JWT"}`, claims, key, sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg NONE", twoc2ptest.Forge(`{"alg":"NONE"}`, claims, nil, nil), nil},
		{"alg HS512, right key", twoc2ptest.Forge(`{"alg":"HS512","typ":"JWT"}`, claims, key, sha512.New), jwt.ErrTokenSignatureInvalid},
		{"alg HS384, right key", twoc2ptest.Forge(`{"alg":"HS384","typ":"JWT"}`, claims, key, sha512.New384), jwt.ErrTokenSignatureInvalid},
		{"alg RS256 header over an HMAC", twoc2ptest.Forge(`{"alg":"RS256","typ":"JWT"}`, claims, key, sha256.New), jwt.ErrTokenSignatureInvalid},
		{"alg missing", twoc2ptest.Forge(`{"typ":"JWT"}`, claims, key, sha256.New), nil},
		{"expired", tc2pHS256(`{"respCode":"0000","exp":1735689599}`), jwt.ErrTokenExpired},
		{"expired long ago", tc2pHS256(`{"respCode":"0000","exp":1000}`), jwt.ErrTokenExpired},
		{"not valid yet", tc2pHS256(`{"respCode":"0000","nbf":1735689700}`), jwt.ErrTokenNotValidYet},
		{"exp not a number", tc2pHS256(`{"respCode":"0000","exp":"tomorrow"}`), jwt.ErrInvalidType},
		{"two segments", parts[0] + "." + parts[1], jwt.ErrTokenMalformed},
		{"four segments", good + ".x", jwt.ErrTokenMalformed},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], jwt.ErrTokenMalformed},
		{"payload not JSON", parts[0] + "." + twoc2ptest.Segment([]byte("not json")) + "." + parts[2], jwt.ErrTokenMalformed},
		{"empty", "", jwt.ErrTokenMalformed},
		// The same bytes in a second spelling: base64's unused low bits set.
		{"signature with unused bits set", parts[0] + "." + parts[1] + "." + tc2pLaxB64(t, parts[2]), jwt.ErrTokenMalformed},
		{"claims with unused bits set", tc2pForgeSegments(twoc2ptest.Segment([]byte(hs256)), tc2pLaxB64(t, twoc2ptest.Segment([]byte(claims+" "))), key), jwt.ErrTokenMalformed},
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
	return header + "." + claims + "." + twoc2ptest.Segment(m.Sum(nil))
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
