package idempay

import (
	"bytes"
	"encoding/json"
	"strings"
)

// redact replaces every non-empty secret in s.
func redact(s string, secrets ...Secret) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec.Reveal(), redacted)
		}
	}
	return s
}

// redactBytes replaces every non-empty secret in an answer's body, as sent
// and as JSON escapes it, before anything reads the body: an adapter that
// quotes the body into an error message, cut to some length, can then
// never cut a secret in half and leak its first part.
func redactBytes(b []byte, secrets ...Secret) []byte {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		b = replaceIfPresent(b, sec.Reveal())
		if needsJSONEscape(sec.Reveal()) {
			if esc, err := json.Marshal(sec.Reveal()); err == nil {
				b = replaceIfPresent(b, string(esc[1:len(esc)-1]))
			}
		}
	}
	return b
}

// replaceIfPresent replaces every old in b by "[redacted]", copying b only
// when old is there: an answer without the secret is the common case.
func replaceIfPresent(b []byte, old string) []byte {
	if !bytes.Contains(b, []byte(old)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(old), []byte(redacted))
}

// needsJSONEscape reports whether encoding/json would write s other than
// as it is (between the quotes): a control character, a quote, a
// backslash, one of <>& (HTML-escaped), or any non-ASCII byte (invalid
// UTF-8 and U+2028/U+2029 are escaped; for the rest, asking json costs
// little and is never wrong).
func needsJSONEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x80, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return true
		}
	}
	return false
}

// redactFields replaces, anywhere in a JSON document, the value of every
// member named in names (a client secret the provider returns with a
// charge) by "[redacted]". A document that does not parse is dropped
// whole: what cannot be read cannot be shown to be free of secrets.
func redactFields(raw []byte, names []string) []byte {
	if len(raw) == 0 || len(names) == 0 || !mentionsAny(raw, names) {
		return raw
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return nil
	}
	if !scrub(doc, names) {
		return raw
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil
	}
	return out
}

// scrub redacts the named members in v, in place, and reports whether it
// changed anything.
func scrub(v any, names []string) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if isSecretField(k, names) && sub != nil {
				t[k] = redacted
				changed = true
				continue
			}
			changed = scrub(sub, names) || changed
		}
	case []any:
		for _, sub := range t {
			changed = scrub(sub, names) || changed
		}
	}
	return changed
}

// mentionsAny reports whether raw holds any of names as a quoted JSON
// string, in any case: an answer that names none has nothing to scrub and
// need not be parsed. A name escaped with \u in the document would be
// missed here, so such documents are always parsed.
func mentionsAny(raw []byte, names []string) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for _, c := range raw {
		if c >= 0x80 {
			// Unicode case folding is not byte for byte: parse, and let
			// isSecretField decide.
			return true
		}
	}
	for _, n := range names {
		if !isASCII(n) || quotedFold(raw, n) {
			return true
		}
	}
	return false
}

// quotedFold reports whether raw holds `"name"` in any ASCII case; raw and
// name are ASCII.
func quotedFold(raw []byte, name string) bool {
	for i := 0; i+len(name)+2 <= len(raw); i++ {
		if raw[i] == '"' && raw[i+len(name)+1] == '"' && asciiEqualFold(raw[i+1:i+1+len(name)], name) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isSecretField(k string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

// secretFields lists the answer members a provider marks as secrets.
func secretFields(p Provider) []string {
	if s, ok := p.(SecretFielder); ok {
		return s.SecretFields()
	}
	return nil
}
