package twoc2ptest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
)

// HS256Header is the JOSE header 2C2P signs with.
const HS256Header = `{"alg":"HS256","typ":"JWT"}`

// Forge builds a compact JWT by hand from any header and claims, with the
// MAC h makes under key (no signature when h is nil), so that tests can
// make tokens golang-jwt would refuse to make: other algorithms, "none",
// another key.
func Forge(header, claims string, key []byte, h func() hash.Hash) string {
	si := Segment([]byte(header)) + "." + Segment([]byte(claims))
	if h == nil {
		return si + "."
	}
	m := hmac.New(h, key)
	m.Write([]byte(si))
	return si + "." + Segment(m.Sum(nil))
}

// SignHS256 signs claims as 2C2P does: HS256 under secret, written by hand.
func SignHS256(claims, secret string) string {
	return Forge(HS256Header, claims, []byte(secret), sha256.New)
}

// Segment is b as a JWT segment: base64url without padding.
func Segment(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Body wraps a token as 2C2P's request and answer bodies do.
func Body(token string) []byte { return []byte(`{"payload":"` + token + `"}`) }
