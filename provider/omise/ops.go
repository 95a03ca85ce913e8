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

var _ idempay.Operator = Provider{}

// Operates reports that the adapter makes refunds, captures (of
// authorisations) and cancels (Omise's reverse), and looks each up.
func (Provider) Operates(idempay.OpType) (makes, finds bool) { return true, true }

// ValidateOp refuses, with a *idempay.ValidationError, an operation Omise
// could not take or the adapter could not find again: a bad Provider
// setting; for a refund or capture, a currency whose minor unit differs
// from Omise's; for a refund, metadata under idempay's tags or with square
// brackets. What Omise has no place for is not sent: a refund's Reason, a
// capture's Metadata (Omise's capture keeps none), a cancel's Reason and
// Metadata (Omise's reverse takes no parameters).
func (p Provider) ValidateOp(op idempay.OpRequest) error {
	if err := p.validateSettings(); err != nil {
		return err
	}
	if op.Type == idempay.OpCancel {
		return nil
	}
	if err := checkCurrency(op.Currency); err != nil {
		return err
	}
	if op.Type == idempay.OpRefund {
		return checkOpMetadata(op.Metadata)
	}
	return nil
}

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

// NewOpRequest builds the operation's POST under /charges/{charge},
// form-encoded, with the key in Idempotency-Key, which Omise does not
// document: nothing relies on it.
//
//   - A refund is POST /charges/{charge}/refunds: amount,
//     metadata[idempay_op] (the refund ID), metadata[idempay_intent],
//     metadata[idempay_namespace] and metadata[idempay_key] (the attempt's
//     key), with the caller's metadata.
//   - A capture is POST /charges/{charge}/capture with capture_amount: the
//     amount asked, or for a whole capture the authorised amount the
//     Client completed the request with.
//   - A cancel is POST /charges/{charge}/reverse, which releases an
//     authorisation that was not captured. It has no parameters; the
//     Client keeps net/http from resending such a bodiless POST behind its
//     back.
func (p Provider) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	f := url.Values{}
	switch op.Type {
	case idempay.OpCancel:
		return p.opPost(ctx, t, op, "reverse", f, key)
	case idempay.OpCapture:
		if op.Amount > 0 {
			f.Set("capture_amount", strconv.FormatInt(op.Amount, 10))
		}
		return p.opPost(ctx, t, op, "capture", f, key)
	}
	f.Set("amount", strconv.FormatInt(op.Amount, 10))
	f.Set("metadata["+OpMetadataKey+"]", op.ID)
	wire.SetTags(f, t, op.IntentID, key, op.Metadata)
	return p.opPost(ctx, t, op, "refunds", f, key)
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
