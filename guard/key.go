package guard

import (
	"errors"
	"fmt"
	"strings"
)

// HeaderKey is the request header that carries the key
// (draft-ietf-httpapi-idempotency-key-header).
const HeaderKey = "Idempotency-Key"

// HeaderReplayed marks a replayed response: "true".
const HeaderReplayed = "Idempotency-Replayed"

var (
	errKeyMissing   = errors.New("missing")
	errKeyMalformed = errors.New("malformed")
)

// keyError says why a request's Idempotency-Key was refused. Its message
// never quotes the value.
type keyError struct {
	kind   error // errKeyMissing or errKeyMalformed
	reason string
}

func (e *keyError) Error() string { return "Idempotency-Key " + e.kind.Error() + ": " + e.reason }
func (e *keyError) Unwrap() error { return e.kind }

func malformed(format string, args ...any) error {
	return &keyError{kind: errKeyMalformed, reason: fmt.Sprintf(format, args...)}
}

// parseKey reads the one Idempotency-Key field of a request, in either
// form: the draft's structured-field String ("8e03978e-..."), or the bare
// token most clients send (8e03978e-...). Both decode to the same key, so a
// client that switches form between retries keeps its key. The key must be
// min to max characters of printable ASCII other than space, '"', '\', ','
// and ';': what every payment provider accepts as a key, and nothing a
// structured-field list or parameter could be confused with.
func parseKey(values []string, min, max int) (string, error) {
	switch len(values) {
	case 0:
		return "", &keyError{kind: errKeyMissing, reason: "the header is required on this method"}
	case 1:
	default:
		return "", malformed("the header appears %d times", len(values))
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", &keyError{kind: errKeyMissing, reason: "the header is empty"}
	}
	key := v
	if v[0] == '"' {
		var err error
		if key, err = parseSFString(v); err != nil {
			return "", err
		}
	}
	return key, checkKey(key, min, max)
}

// parseSFString decodes an RFC 8941 sf-string that makes up the whole
// field: a quoted string whose only escapes are \" and \\. Parameters after
// it are refused: the draft defines none.
func parseSFString(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++
			if i == len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", malformed("a structured-field string may escape only '\"' and '\\'")
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", malformed("nothing may follow the closing quote (parameters are not accepted)")
			}
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", malformed("a structured-field string holds printable ASCII only")
		default:
			b.WriteByte(c)
		}
	}
	return "", malformed("the structured-field string has no closing quote")
}

// checkKey applies the length and character limits to a decoded key.
func checkKey(key string, min, max int) error {
	if len(key) < min || len(key) > max {
		return malformed("the key is %d characters; it must be %d to %d", len(key), min, max)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' || c == ',' || c == ';' {
			return malformed("character %d is not allowed (printable ASCII without space, '\"', '\\', ',' or ';')", i+1)
		}
	}
	return nil
}
