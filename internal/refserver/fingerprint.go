package refserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// fingerprint identifies a request for comparing two uses of one key. It
// covers the method and path as well as the body, so that one key cannot
// be replayed against another endpoint, and it hashes the body's canonical
// form, so that field order, whitespace and escapes do not make the same
// request look different.
func fingerprint(method, path string, body []byte) (string, error) {
	canon, err := canonicalJSON(body)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	// NUL cannot occur in a method or a path, so the parts cannot run
	// into each other.
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON re-encodes one JSON value with object keys sorted (which
// json.Marshal does for maps), no insignificant whitespace, and numbers in
// one spelling.
func canonicalJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // keep big integers exact instead of rounding to float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("refserver: data after the JSON value")
	}
	return json.Marshal(canonicalValue(v))
}

func canonicalValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = canonicalValue(e)
		}
	case []any:
		for i, e := range v {
			v[i] = canonicalValue(e)
		}
	case json.Number:
		return canonicalNumber(v)
	}
	return v
}

// canonicalNumber spells 1500, 1500.0 and 1.5e3 the same way. Integer
// literals are kept as sent (JSON allows one spelling of each, bar -0), so
// integers too large for float64 stay exact.
func canonicalNumber(n json.Number) json.Number {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return n
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return n // out of float64's range: keep the literal
	}
	if math.Trunc(f) == f && math.Abs(f) < 1<<53 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
