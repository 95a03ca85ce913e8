package twoc2p

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha1" // RSA-OAEP as JOSE defines it (RFC 7518 4.3) hashes with SHA-1
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// Payment Maintenance wraps its XML in JOSE, as 2C2P documents it for
// Payment Action 2.0: the XML is encrypted to the receiver (compact JWE,
// RSA-OAEP with A256GCM), and the JWE signed by the sender (compact JWS,
// PS256) whose payload is the JWE's compact form.

// Errors of reading a Payment Maintenance answer, for errors.Is.
var (
	// ErrMaintenanceSignature: the answer's JWS is malformed, names another
	// algorithm than PS256, or does not verify with 2C2P's public key.
	ErrMaintenanceSignature = errors.New("twoc2p: Payment Maintenance answer: JWS does not verify (PS256, 2C2P's key)")
	// ErrMaintenanceDecrypt: the JWE inside a verified answer is malformed,
	// names other algorithms than RSA-OAEP and A256GCM, or does not decrypt
	// with the merchant's private key.
	ErrMaintenanceDecrypt = errors.New("twoc2p: Payment Maintenance answer: JWE does not decrypt (RSA-OAEP, A256GCM, the merchant's key)")
)

// The protected headers written, and the algorithms accepted.
const (
	jweHeader = `{"alg":"RSA-OAEP","enc":"A256GCM"}`
	jwsHeader = `{"alg":"PS256","typ":"JWT"}`
)

var b64 = base64.RawURLEncoding.Strict()

func seg(b []byte) string { return b64.EncodeToString(b) }

// seal encrypts plain to 2C2P's key and signs the encryption with the
// merchant's. It is deterministic: the content key, the IV, the OAEP seed
// and the PSS salt are drawn from an HMAC stream keyed by a secret derived
// from the merchant's private key and the plain text, so that one request
// built twice is the same bytes (the Client sends a request as built) and
// two different requests share no key and nonce. Only the equality of two
// requests shows through, as it does on the wire anyway.
func seal(plain []byte, k MaintenanceKeys) (string, error) {
	secret := streamSecret(k.Merchant)
	rnd := newStream(secret, "jwe", plain)
	cek, iv := make([]byte, 32), make([]byte, 12)
	_, _ = rnd.Read(cek)
	_, _ = rnd.Read(iv)
	ek, err := rsa.EncryptOAEP(sha1.New(), rnd, k.Gateway, cek, nil)
	if err != nil {
		return "", fmt.Errorf("twoc2p: encrypt the content key: %w", err)
	}
	gcm, err := newGCM(cek)
	if err != nil {
		return "", err
	}
	header := seg([]byte(jweHeader))
	sealed := gcm.Seal(nil, iv, plain, []byte(header))
	n := len(sealed) - gcm.Overhead()
	jwe := strings.Join([]string{header, seg(ek), seg(iv), seg(sealed[:n]), seg(sealed[n:])}, ".")

	input := seg([]byte(jwsHeader)) + "." + seg([]byte(jwe))
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPSS(newStream(secret, "jws", []byte(input)), k.Merchant, crypto.SHA256, digest[:],
		&rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		return "", fmt.Errorf("twoc2p: sign the request: %w", err)
	}
	return input + "." + seg(sig), nil
}

// open verifies token's JWS with 2C2P's key and decrypts the JWE inside
// with the merchant's. Errors are ErrMaintenanceSignature or
// ErrMaintenanceDecrypt, wrapped with why; none carries key material.
func open(token string, k MaintenanceKeys) ([]byte, error) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: %d segments", ErrMaintenanceSignature, len(parts))
	}
	if err := checkHeader(parts[0], "PS256", ""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMaintenanceSignature, err)
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature segment", ErrMaintenanceSignature)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPSS(k.Gateway, crypto.SHA256, digest[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) != nil {
		return nil, ErrMaintenanceSignature
	}
	jwe, err := b64.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload segment", ErrMaintenanceSignature)
	}
	return decrypt(string(jwe), k.Merchant)
}

func decrypt(jwe string, with *rsa.PrivateKey) ([]byte, error) {
	parts := strings.Split(jwe, ".")
	if len(parts) != 5 {
		return nil, fmt.Errorf("%w: %d segments", ErrMaintenanceDecrypt, len(parts))
	}
	if err := checkHeader(parts[0], "RSA-OAEP", "A256GCM"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMaintenanceDecrypt, err)
	}
	var raw [4][]byte
	for i := range raw {
		b, err := b64.DecodeString(parts[i+1])
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d", ErrMaintenanceDecrypt, i+2)
		}
		raw[i] = b
	}
	cek, err := rsa.DecryptOAEP(sha1.New(), nil, with, raw[0], nil)
	if err != nil || len(cek) != 32 {
		return nil, ErrMaintenanceDecrypt
	}
	gcm, err := newGCM(cek)
	if err != nil || len(raw[1]) != gcm.NonceSize() || len(raw[3]) != gcm.Overhead() {
		return nil, ErrMaintenanceDecrypt
	}
	plain, err := gcm.Open(nil, raw[1], append(raw[2], raw[3]...), []byte(parts[0]))
	if err != nil {
		return nil, ErrMaintenanceDecrypt
	}
	return plain, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// checkHeader accepts a protected header naming alg (and enc when not
// empty) and no critical extension the reader would have to honour.
func checkHeader(segment, alg, enc string) error {
	b, err := b64.DecodeString(segment)
	if err != nil {
		return errors.New("header segment is not base64url")
	}
	var h struct {
		Alg  string          `json:"alg"`
		Enc  string          `json:"enc"`
		Crit json.RawMessage `json:"crit"`
	}
	switch {
	case json.Unmarshal(b, &h) != nil:
		return errors.New("header is not a JSON object")
	case h.Alg != alg:
		return fmt.Errorf("alg %q, want %s", h.Alg, alg)
	case h.Enc != enc:
		return fmt.Errorf("enc %q, want %s", h.Enc, enc)
	case h.Crit != nil:
		return errors.New("critical header extensions are not supported")
	}
	return nil
}

// streamSecret derives, from the merchant's private key, the key of the
// stream seal draws from. It never leaves this package.
func streamSecret(k *rsa.PrivateKey) []byte {
	h := sha256.New()
	h.Write([]byte("idempay/twoc2p/maintenance/seal/v1\x00"))
	h.Write(k.D.Bytes())
	return h.Sum(nil)
}

// stream is HMAC-SHA256 in counter mode over (label, msg): a keyed,
// deterministic source of bytes.
type stream struct {
	mac     hash.Hash
	label   string
	msg     []byte
	counter uint32
	buf     []byte
}

func newStream(secret []byte, label string, msg []byte) *stream {
	return &stream{mac: hmac.New(sha256.New, secret), label: label, msg: msg}
}

func (s *stream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			s.mac.Reset()
			var c [4]byte
			binary.BigEndian.PutUint32(c[:], s.counter)
			s.counter++
			s.mac.Write([]byte(s.label))
			s.mac.Write([]byte{0})
			s.mac.Write(c[:])
			s.mac.Write(s.msg)
			s.buf = s.mac.Sum(nil)
		}
		m := copy(p[n:], s.buf)
		s.buf = s.buf[m:]
		n += m
	}
	return n, nil
}
