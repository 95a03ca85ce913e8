package twoc2ptest

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" // RSA-OAEP, as JOSE defines it (RFC 7518 4.3), hashes with SHA-1
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
)

// Payment Maintenance wraps its XML in JOSE, as 2C2P documents it for
// Payment Action 2.0: the XML is encrypted to the receiver (JWE, RSA-OAEP
// with A256GCM), and the encryption signed by the sender (JWS, PS256), both
// in compact form. The merchant encrypts to 2C2P's public key and signs
// with its own private key; 2C2P answers encrypted to the merchant's
// public key and signed with its own.

// The JOSE headers the fake writes, and the algorithms it accepts.
const (
	jweHeader = `{"alg":"RSA-OAEP","enc":"A256GCM"}`
	jwsHeader = `{"alg":"PS256","typ":"JWT"}`
)

// Errors of Open.
var (
	ErrSignature = errors.New("twoc2ptest: the JWS does not verify (PS256)")
	ErrDecrypt   = errors.New("twoc2ptest: the JWE does not decrypt (RSA-OAEP, A256GCM)")
)

// Seal encrypts plain to recipient (JWE: RSA-OAEP, A256GCM) and signs the
// encryption with signer (JWS: PS256), in compact serialisation: a
// maintenance request as a merchant sends it (recipient 2C2P's key, see
// Server.GatewayKey), or an answer as 2C2P sends it.
func Seal(plain []byte, recipient *rsa.PublicKey, signer *rsa.PrivateKey) (string, error) {
	jwe, err := encrypt(plain, recipient)
	if err != nil {
		return "", err
	}
	si := Segment([]byte(jwsHeader)) + "." + Segment([]byte(jwe))
	h := sha256.Sum256([]byte(si))
	sig, err := rsa.SignPSS(rand.Reader, signer, crypto.SHA256, h[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		return "", err
	}
	return si + "." + Segment(sig), nil
}

// Open verifies token's JWS with signer's public key and decrypts the JWE
// inside with recipient's private key, returning the plain text:
// ErrSignature or ErrDecrypt when it cannot.
func Open(token string, signer *rsa.PublicKey, recipient *rsa.PrivateKey) ([]byte, error) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 || !headerAlg(parts[0], "PS256", "") {
		return nil, ErrSignature
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, ErrSignature
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPSS(signer, crypto.SHA256, h[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) != nil {
		return nil, ErrSignature
	}
	jwe, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, ErrSignature
	}
	return decrypt(string(jwe), recipient)
}

func encrypt(plain []byte, to *rsa.PublicKey) (string, error) {
	cek := make([]byte, 32)
	iv := make([]byte, 12)
	_, _ = rand.Read(cek)
	_, _ = rand.Read(iv)
	ek, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, to, cek, nil)
	if err != nil {
		return "", err
	}
	gcm, err := newGCM(cek)
	if err != nil {
		return "", err
	}
	header := Segment([]byte(jweHeader))
	sealed := gcm.Seal(nil, iv, plain, []byte(header))
	ct, tag := sealed[:len(sealed)-gcm.Overhead()], sealed[len(sealed)-gcm.Overhead():]
	return strings.Join([]string{header, Segment(ek), Segment(iv), Segment(ct), Segment(tag)}, "."), nil
}

func decrypt(jwe string, with *rsa.PrivateKey) ([]byte, error) {
	parts := strings.Split(jwe, ".")
	if len(parts) != 5 || !headerAlg(parts[0], "RSA-OAEP", "A256GCM") {
		return nil, ErrDecrypt
	}
	var raw [4][]byte
	for i := range raw {
		b, err := base64.RawURLEncoding.DecodeString(parts[i+1])
		if err != nil {
			return nil, ErrDecrypt
		}
		raw[i] = b
	}
	cek, err := rsa.DecryptOAEP(sha1.New(), nil, with, raw[0], nil)
	if err != nil || len(cek) != 32 {
		return nil, ErrDecrypt
	}
	gcm, err := newGCM(cek)
	if err != nil || len(raw[1]) != gcm.NonceSize() {
		return nil, ErrDecrypt
	}
	plain, err := gcm.Open(nil, raw[1], append(raw[2], raw[3]...), []byte(parts[0]))
	if err != nil {
		return nil, ErrDecrypt
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

// headerAlg reports whether a JOSE header segment names alg (and enc, if
// not empty) and nothing it cannot honour ("crit").
func headerAlg(seg, alg, enc string) bool {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return false
	}
	var h struct {
		Alg  string   `json:"alg"`
		Enc  string   `json:"enc"`
		Crit []string `json:"crit"`
	}
	return json.Unmarshal(b, &h) == nil && h.Alg == alg && h.Enc == enc && h.Crit == nil
}

// joseKeys are the server's maintenance keys, made on first use unless
// given: 2C2P's key pair (WithGatewayKey), and the merchant's when
// WithMerchantKey did not give its public half.
type joseKeys struct {
	once         sync.Once
	gateway      *rsa.PrivateKey
	merchant     *rsa.PublicKey  // WithMerchantKey's, or merchantPriv's
	merchantPriv *rsa.PrivateKey // made here when merchant was not given
	err          error
}

func (k *joseKeys) load() error {
	k.once.Do(func() {
		if k.gateway == nil {
			if k.gateway, k.err = rsa.GenerateKey(rand.Reader, 2048); k.err != nil {
				return
			}
		}
		if k.merchant == nil {
			if k.merchantPriv, k.err = rsa.GenerateKey(rand.Reader, 2048); k.err == nil {
				k.merchant = &k.merchantPriv.PublicKey
			}
		}
	})
	return k.err
}

// GatewayKey returns 2C2P's public key, as the fake holds it: a merchant
// encrypts maintenance requests to it and verifies the answers' signature
// with it. The pair is the one WithGatewayKey gave, or made on first use.
func (s *Server) GatewayKey() *rsa.PublicKey {
	if s.jose.load() != nil {
		return nil
	}
	return &s.jose.gateway.PublicKey
}

// MerchantKey returns the merchant's private key that the server made on
// first use when WithMerchantKey was not given (sign maintenance requests
// with it, decrypt the answers with it), and nil otherwise.
func (s *Server) MerchantKey() *rsa.PrivateKey {
	if s.jose.load() != nil {
		return nil
	}
	return s.jose.merchantPriv
}
