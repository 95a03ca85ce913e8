package twoc2p

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
)

// MaintenanceKeys are the RSA keys of Payment Maintenance (refunds,
// settlements, voids), which idempay.Target cannot carry: Config.Credentials
// is the merchant secret key of PGW v4.3, one secret. Each maintenance
// request is encrypted to 2C2P's public key (JWE, RSA-OAEP with A256GCM)
// and signed with the merchant's private key (JWS, PS256); each answer is
// encrypted to the merchant's public key and signed with 2C2P's.
//
// No key material is ever printed: String, GoString, Format and LogValue
// say only which keys are set, so a Provider or a Config logged with %+v or
// slog shows none, and no error of the adapter carries any.
type MaintenanceKeys struct {
	// Merchant is the merchant's private key, whose public half was
	// registered with 2C2P.
	Merchant *rsa.PrivateKey
	// Gateway is 2C2P's public key (from the certificate 2C2P gives the
	// merchant).
	Gateway *rsa.PublicKey
}

// ErrNoMaintenanceKeys: the Provider has no MaintenanceKeys (or half of
// them), so it can make no refund, settlement or void. It comes wrapped with
// idempay.ErrNotSupported in an *idempay.OpError of outcome failed, before
// anything is stored.
var ErrNoMaintenanceKeys = errors.New("twoc2p: Payment Maintenance needs Provider.Maintenance: the merchant's RSA private key and 2C2P's RSA public key")

// minKeyBits is the smallest RSA modulus accepted for either key.
const minKeyBits = 2048

// Check says what is missing or too weak (ErrNoMaintenanceKeys when a key
// is missing), without naming any key material: call it at start-up to
// fail early.
func (k MaintenanceKeys) Check() error {
	switch {
	case k.Merchant == nil || k.Gateway == nil:
		return ErrNoMaintenanceKeys
	case k.Merchant.N == nil || k.Merchant.N.BitLen() < minKeyBits:
		return fmt.Errorf("twoc2p: Provider.Maintenance.Merchant: an RSA key of at least %d bits is required", minKeyBits)
	case k.Gateway.N == nil || k.Gateway.N.BitLen() < minKeyBits:
		return fmt.Errorf("twoc2p: Provider.Maintenance.Gateway: an RSA key of at least %d bits is required", minKeyBits)
	}
	return nil
}

// String says which keys are set, and nothing of them.
func (k MaintenanceKeys) String() string {
	set := func(ok bool) string {
		if ok {
			return "set"
		}
		return "missing"
	}
	return "twoc2p.MaintenanceKeys{Merchant: " + set(k.Merchant != nil) + ", Gateway: " + set(k.Gateway != nil) + "}"
}

// GoString is String, for %#v.
func (k MaintenanceKeys) GoString() string { return k.String() }

// Format prints String for every verb, so that no verb reaches the keys.
func (k MaintenanceKeys) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue is String, for log/slog.
func (k MaintenanceKeys) LogValue() slog.Value { return slog.StringValue(k.String()) }

// MarshalJSON is String as a JSON string, for loggers and dumps that
// encode a configuration as JSON: the keys are never encoded.
func (k MaintenanceKeys) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }

// ParseMaintenanceKeys reads the merchant's private key (PEM: PKCS #1 "RSA
// PRIVATE KEY" or PKCS #8 "PRIVATE KEY") and 2C2P's public key (PEM: a
// "CERTIFICATE", PKIX "PUBLIC KEY" or PKCS #1 "RSA PUBLIC KEY"). Its errors
// name the part at fault, never its content. A certificate's validity is
// not checked: it only carries the key 2C2P gave.
func ParseMaintenanceKeys(merchantPrivatePEM, gatewayPublicPEM []byte) (MaintenanceKeys, error) {
	var k MaintenanceKeys
	priv, err := parsePrivate(merchantPrivatePEM)
	if err != nil {
		return k, fmt.Errorf("twoc2p: merchant private key: %w", err)
	}
	pub, err := parsePublic(gatewayPublicPEM)
	if err != nil {
		return k, fmt.Errorf("twoc2p: 2C2P public key: %w", err)
	}
	k = MaintenanceKeys{Merchant: priv, Gateway: pub}
	return k, k.Check()
}

var (
	errNoPEM  = errors.New("no PEM block")
	errNotRSA = errors.New("not an RSA key")
)

func parsePrivate(b []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errNoPEM
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PKCS #1 block does not parse")
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PKCS #8 block does not parse")
		}
		if rk, ok := k.(*rsa.PrivateKey); ok {
			return rk, nil
		}
		return nil, errNotRSA
	}
	return nil, fmt.Errorf("PEM block of type %q; want RSA PRIVATE KEY or PRIVATE KEY", block.Type)
}

func parsePublic(b []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errNoPEM
	}
	var key any
	switch block.Type {
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errors.New("certificate does not parse")
		}
		key = c.PublicKey
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PKIX block does not parse")
		}
		key = k
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PKCS #1 block does not parse")
		}
		key = k
	default:
		return nil, fmt.Errorf("PEM block of type %q; want CERTIFICATE, PUBLIC KEY or RSA PUBLIC KEY", block.Type)
	}
	if rk, ok := key.(*rsa.PublicKey); ok {
		return rk, nil
	}
	return nil, errNotRSA
}
