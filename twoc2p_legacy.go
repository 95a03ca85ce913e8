package idempay

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// twoc2pSignatureField is the member the legacy style adds to the payload.
const twoc2pSignatureField = "signature"

// LegacySign signs payload the way 2C2P's older APIs (redirect 8.5, PGW 3.x)
// expect: the payload is encoded as compact JSON (encoding/json, no
// spaces), the hex HMAC-SHA256 of exactly those bytes under the secret is
// computed, and the result is the same object with a last member
// "signature" holding it. payload must encode to a JSON object without a
// "signature" member.
//
// It returns the signed message and the signature.
func (s TwoC2PSigner) LegacySign(payload any) (signed []byte, signature string, err error) {
	if s.Secret == "" {
		return nil, "", ErrTwoC2PNoSecret
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	members, err := twoc2pMembers(body)
	if err != nil {
		return nil, "", fmt.Errorf("%w: payload: %w", ErrInvalidRequest, err)
	}
	for _, m := range members {
		if m.name == twoc2pSignatureField {
			return nil, "", fmt.Errorf("%w: payload already has a %q member", ErrInvalidRequest, twoc2pSignatureField)
		}
	}
	signature = s.legacyMAC(body)
	var b bytes.Buffer
	b.Write(body[:len(body)-1]) // json.Marshal of an object ends in '}'
	if len(members) > 0 {
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "%q:%q}", twoc2pSignatureField, signature)
	return b.Bytes(), signature, nil
}

// LegacyVerify checks a message signed in the legacy style and returns the
// signed bytes: the object without its "signature" member, members in the
// order received, compacted. The verifier works from the bytes received,
// not from a re-encoding of decoded values, so it agrees with any signer
// that signed compact JSON, whatever its key order or string escaping.
//
// The signature is compared in constant time. A message with a duplicate
// member name is refused, since parsers disagree about which duplicate
// wins and a signature must cover one unambiguous meaning. Failures wrap
// ErrTwoC2PSignature (or ErrTwoC2PMalformed for a message that is not one
// JSON object).
func (s TwoC2PSigner) LegacyVerify(message []byte) ([]byte, error) {
	if s.Secret == "" {
		return nil, ErrTwoC2PNoSecret
	}
	members, err := twoc2pMembers(message)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTwoC2PMalformed, err)
	}
	var (
		got    []byte
		signed bytes.Buffer
		seen   = map[string]bool{}
		first  = true
	)
	signed.WriteByte('{')
	for _, m := range members {
		if seen[m.name] {
			return nil, fmt.Errorf("%w: duplicate member %q", ErrTwoC2PSignature, m.name)
		}
		seen[m.name] = true
		if m.name == twoc2pSignatureField {
			var hexSig string
			if json.Unmarshal(m.value, &hexSig) != nil {
				return nil, fmt.Errorf("%w: signature is not a string", ErrTwoC2PSignature)
			}
			if got, err = hex.DecodeString(hexSig); err != nil {
				return nil, fmt.Errorf("%w: signature is not hexadecimal", ErrTwoC2PSignature)
			}
			continue
		}
		if !first {
			signed.WriteByte(',')
		}
		first = false
		signed.Write(m.rawName)
		signed.WriteByte(':')
		if err := json.Compact(&signed, m.value); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTwoC2PMalformed, err)
		}
	}
	signed.WriteByte('}')
	if got == nil {
		return nil, fmt.Errorf("%w: no %q member", ErrTwoC2PSignature, twoc2pSignatureField)
	}
	want, _ := hex.DecodeString(s.legacyMAC(signed.Bytes()))
	if !hmac.Equal(got, want) {
		return nil, fmt.Errorf("%w: signature mismatch", ErrTwoC2PSignature)
	}
	return signed.Bytes(), nil
}

func (s TwoC2PSigner) legacyMAC(b []byte) string {
	m := hmac.New(sha256.New, []byte(s.Secret.Reveal()))
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// twoc2pMember is one member of a JSON object as it was written.
type twoc2pMember struct {
	name    string          // decoded
	rawName []byte          // as written, quotes included
	value   json.RawMessage // as written
}

// twoc2pMembers splits one JSON object into its members, keeping the bytes
// of every name and value as they were written.
func twoc2pMembers(b []byte) ([]twoc2pMember, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []twoc2pMember
	for dec.More() {
		// The decoder's offset before a name token points just after the
		// preceding ',' or '{'; the name's raw bytes follow, after any
		// whitespace.
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("object member name is not a string")
		}
		rawName := bytes.TrimLeft(b[start:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, twoc2pMember{name: name, rawName: rawName, value: v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("unterminated JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}
