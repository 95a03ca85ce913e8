package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Verifier checks that a webhook request was signed by the provider: the
// header is the request's, the body its raw bytes exactly as received
// (before any JSON decoding, which would change them). It returns nil for
// an authentic, fresh request, and otherwise an error matching
// ErrNoSignature, ErrBadSignature or ErrTimestamp.
//
// *Stripe and *Omise implement it; an adapter for another provider can
// too, and plugs into NewHandler the same way.
type Verifier interface {
	Verify(header http.Header, body []byte) error
}

// keyring holds the HMAC keys of a verifier. It is reached only through a
// pointer so that printing a verifier with fmt shows an address: fmt
// cannot call idempay.Secret's redacting methods on unexported fields, and
// would print raw key bytes.
type keyring struct {
	keys [][]byte
}

// matches reports whether any candidate equals HMAC-SHA256(key, ts + "." +
// body) for any key. Each comparison is constant-time (hmac.Equal), and
// every pair is compared even after a match, so the time taken does not
// tell which secret or which candidate matched.
func (k *keyring) matches(ts string, body []byte, candidates [][]byte) bool {
	if k == nil {
		return false
	}
	ok := false
	for _, key := range k.keys {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		want := m.Sum(nil)
		for _, c := range candidates {
			if hmac.Equal(want, c) {
				ok = true
			}
		}
	}
	return ok
}

// decodeHex returns the candidates that are hex of the right length for a
// SHA-256 MAC. Others are dropped: they can match nothing, and if none is
// left the caller answers ErrBadSignature.
func decodeHex(sigs []string) [][]byte {
	out := make([][]byte, 0, len(sigs))
	for _, s := range sigs {
		b, err := hex.DecodeString(s)
		if err == nil && len(b) == sha256.Size {
			out = append(out, b)
		}
	}
	return out
}

// maxTimestampDigits bounds the timestamp field: 19 digits is the largest
// int64, far beyond any real time.
const maxTimestampDigits = 19

// parseUnix reads unix seconds written as plain ASCII digits. Anything
// else (a sign, spaces, a fraction, milliseconds' extra digits beyond
// int64) is refused rather than interpreted: the string is what was
// signed, and accepting two spellings of one time is how parsers disagree.
// The value is not echoed in the error: it is attacker-controlled text
// headed for logs.
func parseUnix(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%w: missing", ErrTimestamp)
	}
	if len(s) > maxTimestampDigits {
		return time.Time{}, fmt.Errorf("%w: not unix seconds", ErrTimestamp)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, fmt.Errorf("%w: not unix seconds", ErrTimestamp)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: not unix seconds", ErrTimestamp)
	}
	return time.Unix(n, 0), nil
}

// clock is the part of a verifier that judges a timestamp. Its zero value
// uses DefaultTolerance and time.Now, so a zero verifier still refuses
// stale requests.
type clock struct {
	tolerance time.Duration
	now       func() time.Time
}

// fresh returns a *TimestampError unless signed is within the tolerance of
// now, in either direction: a timestamp from the future is as suspect as
// an old one, and more likely a skewed clock worth reporting.
func (c clock) fresh(signed time.Time) error {
	tol, now := c.tolerance, time.Now
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if c.now != nil {
		now = c.now
	}
	t := now()
	if d := t.Sub(signed); d > tol || d < -tol {
		return &TimestampError{Signed: signed, Now: t, Tolerance: tol}
	}
	return nil
}
