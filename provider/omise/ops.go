package omise

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// OpMetadataKey tags every refund with the caller's refund ID
// (idempay.RefundRequest.RefundID), beside the namespace and key tags
// charges carry (NamespaceMetadataKey, KeyMetadataKey) and the intent
// (IntentMetadataKey): a lookup finds the refund by them in the charge's
// refunds. Callers may not set it.
const OpMetadataKey = "idempay_op"

// MaxRefunds is how many refunds Omise lets a charge have: "the charge
// must have fewer than 15 partial refunds" (Omise's Refund API). The
// adapter cannot count a charge's refunds before sending; Omise refuses
// one more, which answers failed.
const MaxRefunds = 15

// DefaultRefundRecheck is Provider.RefundRecheck's default.
const DefaultRefundRecheck = 2 * time.Second

var (
	_ idempay.Refunder      = Provider{}
	_ idempay.RefundFinder  = Provider{}
	_ idempay.Capturer      = Provider{}
	_ idempay.CaptureFinder = Provider{}
	_ idempay.Canceller     = Provider{}
	_ idempay.CancelFinder  = Provider{}
)

// ValidateRefund refuses, with a *idempay.ValidationError, a refund Omise
// could not take or the adapter could not find again: a currency whose
// minor unit differs from Omise's, metadata under idempay's tags or with
// square brackets, a bad Provider setting. RefundRequest.Reason has no
// place in Omise's refund and is not sent.
func (p Provider) ValidateRefund(op idempay.OpRequest) error {
	if err := p.validateSettings(); err != nil {
		return err
	}
	if err := checkCurrency(op.Currency); err != nil {
		return err
	}
	return checkOpMetadata(op.Metadata)
}

// ValidateCapture refuses a capture Omise could not take: a currency
// whose minor unit differs from Omise's, a bad Provider setting. Omise's
// capture keeps no metadata: CaptureRequest.Metadata is not sent.
func (p Provider) ValidateCapture(op idempay.OpRequest) error {
	if err := p.validateSettings(); err != nil {
		return err
	}
	return checkCurrency(op.Currency)
}

// ValidateCancel refuses nothing but a bad Provider setting: Omise's
// reverse takes no parameters, so CancelRequest.Reason and Metadata are
// not sent.
func (p Provider) ValidateCancel(idempay.OpRequest) error { return p.validateSettings() }

func (p Provider) validateSettings() error {
	switch {
	case p.Version != "" && !wire.Printable(p.Version):
		return wire.Invalid("Provider.Version", "must be printable ASCII without spaces")
	case p.ClockSkew < 0 || p.MaxListPages < 0:
		return wire.Invalid("Provider", "ClockSkew and MaxListPages must not be negative")
	}
	return nil
}

// checkOpMetadata refuses what a refund's metadata cannot carry: idempay's
// own tags, and keys the form encoding cannot (square brackets).
func checkOpMetadata(m map[string]string) error {
	for k := range m {
		switch {
		case k == OpMetadataKey || k == IntentMetadataKey || k == NamespaceMetadataKey || k == KeyMetadataKey:
			return wire.Invalid("Metadata", "key %q is reserved for idempay's tags", k)
		case strings.ContainsAny(k, "[]"):
			return wire.Invalid("Metadata", "key %q has square brackets, which the form encoding cannot carry", k)
		}
	}
	return nil
}

// NewRefundRequest builds POST /charges/{charge}/refunds, form-encoded:
// amount, metadata[idempay_op] (the refund ID), metadata[idempay_intent],
// metadata[idempay_namespace] and metadata[idempay_key] (the attempt's
// key), with the caller's metadata. The key goes in Idempotency-Key too,
// which Omise does not document: nothing relies on it.
func (p Provider) NewRefundRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(op.Amount, 10))
	f.Set("metadata["+OpMetadataKey+"]", op.ID)
	wire.SetTags(f, t, op.IntentID, key, op.Metadata)
	return p.opPost(ctx, t, op, "refunds", f, key)
}

// NewCaptureRequest builds POST /charges/{charge}/capture with
// capture_amount: the amount asked, or for a whole capture the authorised
// amount the Client completed the request with.
func (p Provider) NewCaptureRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	f := url.Values{}
	if op.Amount > 0 {
		f.Set("capture_amount", strconv.FormatInt(op.Amount, 10))
	}
	return p.opPost(ctx, t, op, "capture", f, key)
}

// NewCancelRequest builds POST /charges/{charge}/reverse, which releases
// an authorisation that was not captured. It has no parameters; the Client
// keeps net/http from resending such a bodiless POST behind its back.
func (p Provider) NewCancelRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	return p.opPost(ctx, t, op, "reverse", url.Values{}, key)
}

func (p Provider) opPost(ctx context.Context, t idempay.Target, op idempay.OpRequest, action string, f url.Values, key string) (*http.Request, error) {
	u, err := chargePath(t, op.ChargeRef, action)
	if err != nil {
		return nil, err
	}
	r, err := wire.NewFormPost(ctx, u.String(), f, key)
	if err != nil {
		return nil, err
	}
	p.authorize(r, t)
	return r, nil
}

// chargePath is /charges/{ref}/{rest...} under the target. The charge's
// ID comes from the store; one that could leave the charge's path is
// refused rather than sent elsewhere.
func chargePath(t idempay.Target, ref string, rest ...string) (*url.URL, error) {
	if ref == "" || strings.ContainsAny(ref, "/?#%") || ref == "." || ref == ".." {
		return nil, fmt.Errorf("omise: charge ID %q cannot name a charge", ref)
	}
	return t.BaseURL.JoinPath(append([]string{chargesPath, ref}, rest...)...), nil
}
