package stripe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// refundsPath is the collection of refunds.
const refundsPath = "/v1/refunds"

// The reasons Stripe accepts: RefundRequest.Reason is sent as a refund's
// reason, and must be one of the first three; CancelRequest.Reason as a
// PaymentIntent's cancellation_reason, and may also be ReasonAbandoned.
// Stripe refuses any other word (and sets others, such as
// expired_uncaptured_charge or automatic, only itself), so Validate
// refuses them before anything is stored.
const (
	ReasonDuplicate           = "duplicate"
	ReasonFraudulent          = "fraudulent"
	ReasonRequestedByCustomer = "requested_by_customer"
	ReasonAbandoned           = "abandoned" // cancels only
)

var (
	refundReasons = []string{ReasonDuplicate, ReasonFraudulent, ReasonRequestedByCustomer}
	cancelReasons = []string{ReasonAbandoned, ReasonDuplicate, ReasonFraudulent, ReasonRequestedByCustomer}
)

// Tags the adapter sets on what an operation writes at Stripe, counted
// against MaxMetadataKeys:
//
//   - a refund carries idempay_op, idempay_intent, idempay_namespace and
//     idempay_key (the attempt's key), as a charge carries its own;
//   - a capture adds idempay_op to the PaymentIntent's metadata, which
//     already holds the charge's idempay_intent, idempay_namespace,
//     idempay_key and idempay_confirm: the capture's key is not written
//     there, for it would overwrite the charge's, by which the charge is
//     looked up.
const (
	refundTags  = 4
	captureTags = 5
)

// opReserved are the metadata keys an operation's caller may not set.
var opReserved = map[string]bool{IntentMetadataKey: true, NamespaceMetadataKey: true, KeyMetadataKey: true,
	ConfirmMetadataKey: true, OpMetadataKey: true}

// objectID is what a Stripe object ID looks like (pi_..., re_...): what
// goes into a path must be no more than one segment.
var objectID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)

// Operates reports that the adapter makes refunds, captures and cancels,
// and looks each up.
func (Provider) Operates(idempay.OpType) (makes, finds bool) { return true, true }

// ValidateOp refuses, with a *idempay.ValidationError, an operation Stripe
// would refuse (below, for each type), or a bad Provider.APIVersion.
func (p Provider) ValidateOp(op idempay.OpRequest) error {
	if err := p.validateVersion(); err != nil {
		return err
	}
	switch op.Type {
	case idempay.OpCapture:
		return validateCapture(op)
	case idempay.OpCancel:
		return validateCancel(op)
	}
	return validateRefund(op)
}

// validateRefund refuses a refund Stripe would refuse: a reason other than duplicate, fraudulent or
// requested_by_customer, an amount Stripe cannot be sent exactly or
// above MaxAmount, metadata beyond Stripe's limits (50 keys with the four
// tags: 46 of the caller's) or with idempay's keys.
func validateRefund(op idempay.OpRequest) error {
	if err := validateReason(op.Reason, refundReasons, "refund reason"); err != nil {
		return err
	}
	if err := validateOpAmount(op); err != nil {
		return err
	}
	return validateOpMetadata(op.Metadata, refundTags)
}

// validateCapture refuses a capture Stripe would refuse: an amount Stripe
// cannot be sent exactly or above MaxAmount, metadata beyond Stripe's
// limits. A capture's metadata is merged into the PaymentIntent's, which
// holds the charge's tags and metadata: at most 45 keys here, and the
// charge's own metadata counts too (Stripe refuses the capture, before
// acting, if the two come to more than 50 keys).
func validateCapture(op idempay.OpRequest) error {
	if op.Reason != "" {
		return wire.Invalid("Reason", "Stripe's capture takes no reason")
	}
	if op.Amount > 0 {
		if err := validateOpAmount(op); err != nil {
			return err
		}
	}
	return validateOpMetadata(op.Metadata, captureTags)
}

// validateCancel refuses a cancel Stripe would refuse: a reason other
// than abandoned, duplicate, fraudulent or requested_by_customer, and any
// metadata (Stripe's cancel takes none).
func validateCancel(op idempay.OpRequest) error {
	if len(op.Metadata) > 0 {
		return wire.Invalid("Metadata", "Stripe's cancel of a PaymentIntent takes no metadata")
	}
	return validateReason(op.Reason, cancelReasons, "cancellation reason")
}

func (p Provider) validateVersion() error {
	if p.APIVersion != "" && !wire.Printable(p.APIVersion) {
		return wire.Invalid("Provider.APIVersion", "must be printable ASCII without spaces")
	}
	return nil
}

func validateReason(reason string, allowed []string, what string) error {
	if reason == "" || slices.Contains(allowed, reason) {
		return nil
	}
	return wire.Invalid("Reason", "%q is not a Stripe %s: one of %s, or empty", reason, what, strings.Join(allowed, ", "))
}

func validateOpAmount(op idempay.OpRequest) error {
	amount, err := toStripe(op.Currency, op.Amount)
	if err != nil {
		return err
	}
	if amount > MaxAmount {
		return wire.Invalid("Amount", "%d in Stripe's units exceeds Stripe's maximum %d", amount, MaxAmount)
	}
	return nil
}

func validateOpMetadata(m map[string]string, tags int) error {
	if len(m) > MaxMetadataKeys-tags {
		return wire.Invalid("Metadata", "has %d keys; Stripe allows %d, %d of which idempay uses here", len(m), MaxMetadataKeys, tags)
	}
	for k, v := range m {
		switch {
		case opReserved[k]:
			return wire.Invalid("Metadata", "key %q is reserved for idempay's tags", k)
		case utf8.RuneCountInString(k) > MaxMetadataKeyLength:
			return wire.Invalid("Metadata", "key %q is longer than %d characters", k, MaxMetadataKeyLength)
		case strings.ContainsAny(k, "[]"):
			return wire.Invalid("Metadata", "key %q has square brackets, which Stripe does not allow", k)
		case utf8.RuneCountInString(v) > MaxMetadataValueLength:
			return wire.Invalid("Metadata", "value of %q is longer than %d characters", k, MaxMetadataValueLength)
		}
	}
	return nil
}

// NewOpRequest builds the operation's POST (below, for each type), sent
// with the key in the Idempotency-Key header.
func (p Provider) NewOpRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	if err := checkRef(op.ChargeRef); err != nil {
		return nil, err
	}
	switch op.Type {
	case idempay.OpCapture:
		return p.newCaptureRequest(ctx, t, op, key)
	case idempay.OpCancel:
		return p.newCancelRequest(ctx, t, op, key)
	}
	return p.newRefundRequest(ctx, t, op, key)
}

// newRefundRequest builds POST /v1/refunds with the key in the
// Idempotency-Key header and the form payment_intent (the charge's
// PaymentIntent), amount (in Stripe's units), reason if set,
// metadata[idempay_op], metadata[idempay_intent],
// metadata[idempay_namespace], metadata[idempay_key] (the attempt's key)
// and the caller's metadata. The form is encoded sorted: the same bytes on
// every retry.
func (p Provider) newRefundRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	amount, err := toStripe(op.Currency, op.Amount)
	if err != nil {
		return nil, err
	}
	f := url.Values{}
	f.Set("payment_intent", op.ChargeRef)
	f.Set("amount", strconv.FormatInt(amount, 10))
	wire.SetIf(f, "reason", op.Reason)
	wire.SetTags(f, t, op.IntentID, key, op.Metadata)
	f.Set(metadataParam(OpMetadataKey), op.ID)
	return p.post(ctx, t, op.IntentID, t.BaseURL.JoinPath(refundsPath), f, key)
}

// newCaptureRequest builds POST /v1/payment_intents/{id}/capture with the
// key in the Idempotency-Key header and the form amount_to_capture (in
// Stripe's units; the Client sends the authorised amount for a whole
// capture), metadata[idempay_op] and the caller's metadata, which Stripe
// adds to the PaymentIntent's.
func (p Provider) newCaptureRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	f := url.Values{}
	if op.Amount > 0 {
		amount, err := toStripe(op.Currency, op.Amount)
		if err != nil {
			return nil, err
		}
		f.Set("amount_to_capture", strconv.FormatInt(amount, 10))
	}
	for k, v := range op.Metadata {
		f.Set(metadataParam(k), v)
	}
	f.Set(metadataParam(OpMetadataKey), op.ID)
	return p.post(ctx, t, op.IntentID, t.BaseURL.JoinPath(paymentIntentsPath, op.ChargeRef, "capture"), f, key)
}

// newCancelRequest builds POST /v1/payment_intents/{id}/cancel with the
// key in the Idempotency-Key header and cancellation_reason if set.
func (p Provider) newCancelRequest(ctx context.Context, t idempay.Target, op idempay.OpRequest, key string) (*http.Request, error) {
	f := url.Values{}
	wire.SetIf(f, "cancellation_reason", op.Reason)
	return p.post(ctx, t, op.IntentID, t.BaseURL.JoinPath(paymentIntentsPath, op.ChargeRef, "cancel"), f, key)
}

func (p Provider) post(ctx context.Context, t idempay.Target, intentID string, u *url.URL, f url.Values, key string) (*http.Request, error) {
	r, err := wire.NewFormPost(ctx, u.String(), f, key)
	if err != nil {
		return nil, err
	}
	p.authorize(r, t, intentID)
	return r, nil
}

func metadataParam(k string) string { return "metadata[" + k + "]" }

// checkRef refuses a charge reference that is not one Stripe object ID:
// it names the PaymentIntent, in a path segment for captures and cancels.
func checkRef(ref string) error {
	if !objectID.MatchString(ref) {
		return fmt.Errorf("stripe: charge reference %q is not a PaymentIntent ID", ref)
	}
	return nil
}
