package idempay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors of 2C2P payload signing and verification, for errors.Is. The
// golang-jwt error that caused a verification failure (jwt.ErrTokenExpired,
// jwt.ErrTokenSignatureInvalid, ...) is in the chain as well. No error ever
// contains the secret.
var (
	// ErrTwoC2PNoSecret: the merchant secret key is empty. Set
	// Config.Credentials (or TwoC2PSigner.Secret) to it.
	ErrTwoC2PNoSecret = errors.New("idempay: 2C2P merchant secret key is empty")

	// ErrTwoC2PSignature: a signed 2C2P payload did not verify: bad
	// signature, another key, an algorithm other than HS256 ("none"
	// included), an expired or not-yet-valid token, or a malformed one.
	ErrTwoC2PSignature = errors.New("idempay: 2C2P payload signature did not verify")
)

// twoc2pAlg is the one algorithm 2C2P signs with, and the only one accepted.
const twoc2pAlg = "HS256"

// TwoC2PSigner signs and verifies 2C2P payloads with one merchant secret
// key: PGW v4.3 sends every request and answer as a JWT signed with HS256.
// Package provider/twoc2p reads answers with it (twoc2p.ParseResponse).
//
// A zero TwoC2PSigner refuses everything with ErrTwoC2PNoSecret. The Secret
// never appears in an error or in fmt output (it is a Secret).
type TwoC2PSigner struct {
	// Secret is the merchant secret key from the 2C2P dashboard.
	Secret Secret
	// Now is the clock against which an answer's exp and nbf claims are
	// checked, if it has them. Default time.Now.
	Now func() time.Time
}

// rawClaims hands golang-jwt an already-encoded claims object, so the
// signed bytes are exactly the payload the builder produced (field order
// included), which makes signatures reproducible test vectors.
type rawClaims []byte

func (c rawClaims) MarshalJSON() ([]byte, error) { return c, nil }

// The claims a 2C2P request carries are not registered JWT claims; these
// satisfy jwt.Claims for signing only (verification uses jwt.MapClaims).
func (rawClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (rawClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return nil, nil }
func (rawClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (rawClaims) GetIssuer() (string, error)                   { return "", nil }
func (rawClaims) GetSubject() (string, error)                  { return "", nil }
func (rawClaims) GetAudience() (jwt.ClaimStrings, error)       { return nil, nil }

// Sign returns the compact JWT (HS256, header {"alg":"HS256","typ":"JWT"})
// whose payload is claims, which must be a JSON object. encoding/json
// compacts the object as it signs (and escapes <, > and & in strings).
func (s TwoC2PSigner) Sign(claims []byte) (string, error) {
	if s.Secret == "" {
		return "", ErrTwoC2PNoSecret
	}
	trimmed := bytes.TrimSpace(claims)
	if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
		return "", fmt.Errorf("%w: claims must be a JSON object", ErrInvalidRequest)
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, rawClaims(trimmed)).SignedString([]byte(s.Secret.Reveal()))
}

// Verify checks a compact JWT signed by 2C2P and returns its payload, the
// claims object exactly as it was signed. It accepts HS256 only (so "none",
// HS512 and asymmetric algorithms are refused before any key is used),
// refuses a token whose exp has passed or whose nbf has not come, decodes
// every segment strictly (no padding, no unused base64 bits set), and wraps
// every failure in ErrTwoC2PSignature.
func (s TwoC2PSigner) Verify(token string) ([]byte, error) {
	if s.Secret == "" {
		return nil, ErrTwoC2PNoSecret
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{twoc2pAlg}),
		jwt.WithJSONNumber(), // claims are money and codes: no float64
		// One spelling per token: base64 with unused bits set (or padding)
		// would give the same signed bytes a second encoding.
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(now),
	)
	key := []byte(s.Secret.Reveal())
	_, err := p.ParseWithClaims(token, jwt.MapClaims{}, func(t *jwt.Token) (any, error) {
		// WithValidMethods already pinned the algorithm; this re-check is
		// belt and braces against an HMAC key ever reaching another method.
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
		}
		return key, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTwoC2PSignature, err)
	}
	// The token verified, so its middle segment is what 2C2P signed.
	parts := strings.Split(token, ".")
	claims, err := p.DecodeSegment(parts[1])
	if err != nil { // cannot happen after a successful parse; be safe
		return nil, fmt.Errorf("%w: %w", ErrTwoC2PSignature, err)
	}
	return claims, nil
}

// Body wraps a signed JWT as 2C2P's request body: {"payload": "<jwt>"}.
func twoc2pBody(token string) []byte {
	b, _ := json.Marshal(struct {
		Payload string `json:"payload"`
	}{token}) // a string field cannot fail to encode
	return b
}
