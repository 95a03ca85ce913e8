package wire

import (
	"fmt"
	"strings"

	"github.com/idempay/idempay"
)

// BadConfig is the *idempay.ConfigError of an adapter's CheckConfig: the
// field at fault and why. It matches idempay.ErrConfig.
func BadConfig(field, format string, args ...any) error {
	return &idempay.ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// CheckCredentials refuses credentials that are empty or padded with
// white space (a key pasted with its newline), and, when prefixes is not
// empty, a key that starts with none of them. what names the key in the
// reason ("a Stripe secret key"). The key itself never appears in the
// error.
func CheckCredentials(c idempay.Secret, what string, prefixes ...string) error {
	key := c.Reveal()
	switch {
	case key == "":
		return BadConfig("Credentials", "is empty; set %s", what)
	case strings.TrimSpace(key) != key:
		return BadConfig("Credentials", "has leading or trailing white space")
	}
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return nil
		}
	}
	if len(prefixes) > 0 {
		return BadConfig("Credentials", "is not %s (it starts with none of %s)", what, strings.Join(prefixes, ", "))
	}
	return nil
}

// CheckBase refuses a base URL that would make every request go astray:
// one with a query or fragment (the adapter's paths are joined to it, the
// query kept), or whose path already ends with one of the paths the
// adapter appends itself (a BaseURL of https://api.stripe.com/v1 would
// send /v1/v1/payment_intents). own lists those paths, each with its
// leading slash; a path that holds one of them as its last segments is
// refused, with example as the base URL to use instead. Any other path (a
// proxy's prefix) is kept.
func CheckBase(t idempay.Target, example string, own ...string) error {
	u := t.BaseURL
	if u == nil {
		return BadConfig("BaseURL", "is not set")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return BadConfig("BaseURL", "must have no query or fragment")
	}
	path := "/" + strings.Trim(u.Path, "/")
	for _, p := range own {
		if q, ok := endsWithPrefixOf(path, p); ok {
			return BadConfig("BaseURL", "ends with %s, which the adapter appends itself (requests would go to %s%s); use the API's root, e.g. %s",
				q, strings.TrimSuffix(u.Path, "/"), p, example)
		}
	}
	return nil
}

// endsWithPrefixOf reports whether path ends, at a segment boundary, with
// one of own's leading segments ("/v1" or "/v1/refunds" of "/v1/refunds"),
// and which.
func endsWithPrefixOf(path, own string) (string, bool) {
	segs := strings.Split(strings.Trim(own, "/"), "/")
	for k := len(segs); k > 0; k-- {
		q := "/" + strings.Join(segs[:k], "/")
		if strings.HasSuffix(path, q) {
			return q, true
		}
	}
	return "", false
}
