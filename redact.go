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
		b = bytes.ReplaceAll(b, []byte(sec.Reveal()), []byte(redacted))
		if esc, err := json.Marshal(sec.Reveal()); err == nil {
			b = bytes.ReplaceAll(b, esc[1:len(esc)-1], []byte(redacted))
		}
	}
	return b
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
	lower := bytes.ToLower(raw)
	for _, n := range names {
		if bytes.Contains(lower, []byte(`"`+strings.ToLower(n)+`"`)) {
			return true
		}
	}
	return false
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
