package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/idempay/idempay"
)

// StripeSignatureHeader is the header Stripe signs webhooks in:
// "t=<unix seconds>,v1=<hex>[,v1=<hex>...]".
const StripeSignatureHeader = "Stripe-Signature"

// Stripe verifies Stripe webhooks. Each v1 signature in the header is the
// hex HMAC-SHA256 of the timestamp, a dot and the raw body, keyed with the
// endpoint's signing secret ("whsec_...") used as it is, prefix included.
// Stripe puts one v1 per active secret while an endpoint's secret is being
// rolled, so a request verifies if any v1 matches.
//
// The zero value has no secret and refuses every request with
// ErrBadSignature; use NewStripe. A Stripe is safe for concurrent use.
type Stripe struct {
	keys  *keyring
	clock clock
}

var _ Verifier = (*Stripe)(nil)

// NewStripe returns a verifier for the endpoint whose signing secret is
// secret. It is refused if secret is empty. Options: WithTolerance,
// WithClock, WithPreviousSecret.
func NewStripe(secret idempay.Secret, opts ...VerifierOption) (*Stripe, error) {
	if secret == "" {
		return nil, errors.New("webhook: stripe: signing secret is empty")
	}
	c, err := newVerifierConfig(opts)
	if err != nil {
		return nil, err
	}
	k := &keyring{}
	for _, s := range append([]idempay.Secret{secret}, c.previous...) {
		k.keys = append(k.keys, []byte(s.Reveal()))
	}
	return &Stripe{keys: k, clock: clock{tolerance: c.tolerance, now: c.now}}, nil
}

// Verify checks the Stripe-Signature header of a request against its raw
// body. It returns nil for an authentic request signed within the
// tolerance, and otherwise an error matching ErrNoSignature (no header, or
// no v1 in it), ErrTimestamp (no usable t=, or a *TimestampError for a
// genuine but stale signature) or ErrBadSignature (no v1 matches).
// The signature is checked before the age, so a *TimestampError is only
// ever returned for a request Stripe really signed.
func (s *Stripe) Verify(header http.Header, body []byte) error {
	raw := strings.Join(header.Values(StripeSignatureHeader), ",")
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("%w: no %s header", ErrNoSignature, StripeSignatureHeader)
	}
	ts, sigs, err := parseStripeHeader(raw)
	if err != nil {
		return err
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: %s holds no v1 signature", ErrNoSignature, StripeSignatureHeader)
	}
	signed, err := parseUnix(ts)
	if err != nil {
		return err
	}
	if s == nil || !s.keys.matches(ts, body, decodeHex(sigs)) {
		return fmt.Errorf("%w: stripe", ErrBadSignature)
	}
	return s.clock.fresh(signed)
}

// parseStripeHeader splits "t=...,v1=...,v1=...,v0=..." into the timestamp
// and the v1 values. Other schemes (v0, or any later one) are ignored:
// falling back to a scheme other than v1 would let an attacker pick the
// weakest. Two t= fields are refused: which one was signed would be a
// guess.
func parseStripeHeader(raw string) (ts string, v1 []string, err error) {
	seenT := false
	for item := range strings.SplitSeq(raw, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			if seenT {
				return "", nil, fmt.Errorf("%w: %s has two timestamps", ErrTimestamp, StripeSignatureHeader)
			}
			seenT, ts = true, v
		case "v1":
			v1 = append(v1, v)
		}
	}
	return ts, v1, nil
}
