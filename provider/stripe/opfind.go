package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Errors of FindOp. Each leaves the
// operation's outcome unknown.
var (
	// ErrRefundNotListed: the PaymentIntent's refunds could not all be
	// read (more pages than findRefund reads, or an entry that is not a
	// refund), so the absence of the refund's tags proves nothing.
	ErrRefundNotListed = errors.New("stripe: the PaymentIntent's refunds could not all be read (not proof that none was made)")
	// ErrAmbiguousRefund: several refunds carry the tags of one refund
	// attempt. Stripe makes one per key, so someone must reconcile them.
	ErrAmbiguousRefund = errors.New("stripe: several refunds carry the refund's tags")
	// ErrForeignRefund: the refund stored as the operation's reference is
	// not tagged as the operation's.
	ErrForeignRefund = errors.New("stripe: refund belongs to another operation")
	// ErrCapturedElsewhere: the PaymentIntent was captured, but its
	// metadata does not name this capture: someone captured it otherwise
	// (the Dashboard, another integration). This capture can no longer
	// happen, yet the money moved; the books must be reconciled by a
	// person.
	ErrCapturedElsewhere = errors.New("stripe: the PaymentIntent was captured, not by this capture")
)

// maxRefundPages bounds how many pages of 100 refunds findRefund reads:
// far more refunds than any PaymentIntent takes in practice.
const maxRefundPages = 50

// FindOp looks the operation up without making it (below, for each
// type). hc nil means http.DefaultClient.
func (p Provider) FindOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	switch op.Type {
	case idempay.OpCapture:
		return p.findCapture(ctx, hc, t, op)
	case idempay.OpCancel:
		return p.findCancel(ctx, hc, t, op)
	}
	return p.findRefund(ctx, hc, t, op, rec)
}

// findRefund looks a refund up without creating anything: by ID when the
// record holds one (rec.ProviderRef, known once Stripe answered it
// pending), else by listing the PaymentIntent's refunds (GET
// /v1/refunds?payment_intent=, every page) and taking the one tagged with
// the refund's ID (idempay_op), the Client's namespace and the attempt's
// key. Found, it answers the refund's verdict. When every page was read
// and none carries those tags, it answers KindNotFound: a list is not
// search (Stripe's lists read its current state and do not lag), so the
// attempt made no refund, unless a request under its key is still
// executing at Stripe. The Client acts on KindNotFound only for a key past
// Config.KeyRetention (Stripe keeps keys 24 hours, and no request under one
// runs that long), where it fails the attempt and frees its amount. A list
// it could not read whole is KindUnknown with ErrRefundNotListed. hc nil
// means http.DefaultClient.
func (p Provider) findRefund(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	if rec.ProviderRef != "" {
		return p.retrieveRefund(ctx, hc, t, op, rec)
	}
	if err := checkRef(op.ChargeRef); err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, err
	}
	var (
		own       []refund
		requestID string
		after     string
	)
	for range maxRefundPages {
		page, v, err := p.refundPage(ctx, hc, t, op, after)
		if err != nil || v.Kind != idempay.KindSucceeded {
			return v, err
		}
		requestID = v.RequestID
		last := ""
		for _, raw := range page.Data {
			re, ok := parseRefund(raw)
			if !ok {
				// An entry we cannot read may be the refund: its absence
				// from the rest proves nothing.
				return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: requestID},
					fmt.Errorf("%w: unreadable entry %s", ErrRefundNotListed, wire.Snippet(raw))
			}
			last = re.ID
			if ownRefund(re, t, op, rec) {
				own = append(own, re)
			}
		}
		switch {
		case !page.HasMore:
			return foundRefund(own, op, requestID)
		case last == "":
			return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: requestID},
				fmt.Errorf("%w: an empty page says more follow", ErrRefundNotListed)
		}
		after = last
	}
	return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: requestID},
		fmt.Errorf("stripe: PaymentIntent %s has more than %d refunds; %w", op.ChargeRef, maxRefundPages*100, ErrRefundNotListed)
}

// refundList is one page of GET /v1/refunds.
type refundList struct {
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
}

// refundPage reads the page of the refunds of op's PaymentIntent after the
// refund ID after (the first page when empty). v.Kind is KindSucceeded
// when it was read.
func (p Provider) refundPage(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, after string) (refundList, idempay.Verdict, error) {
	u := t.BaseURL.JoinPath(refundsPath)
	q := url.Values{"payment_intent": {op.ChargeRef}, "limit": {"100"}}
	if after != "" {
		q.Set("starting_after", after)
	}
	u.RawQuery = q.Encode()
	var page refundList
	v, body, err := p.get(ctx, hc, t, op.IntentID, u)
	if err != nil || v.Kind != idempay.KindSucceeded {
		return page, v, err
	}
	if err := json.Unmarshal(body, &page); err != nil || page.Data == nil {
		return page, idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
			fmt.Errorf("stripe: list refunds: unreadable answer %s", wire.Snippet(body))
	}
	return page, v, nil
}

func foundRefund(own []refund, op idempay.OpRequest, requestID string) (idempay.Verdict, error) {
	switch len(own) {
	case 0:
		return idempay.Verdict{Kind: idempay.KindNotFound, RequestID: requestID}, nil
	case 1:
		return foundOp(own[0].verdict(idempay.Verdict{RequestID: requestID})), nil
	}
	ids := make([]string, len(own))
	for i, re := range own {
		ids[i] = re.ID
	}
	return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: requestID},
		fmt.Errorf("%w %q: %s", ErrAmbiguousRefund, op.ID, strings.Join(ids, ", "))
}

func (p Provider) retrieveRefund(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	if err := checkRef(rec.ProviderRef); err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, err
	}
	v, body, err := p.get(ctx, hc, t, op.IntentID, t.BaseURL.JoinPath(refundsPath, rec.ProviderRef))
	if err != nil || v.Kind != idempay.KindSucceeded {
		return v, err
	}
	re, ok := parseRefund(body)
	if !ok {
		return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
			fmt.Errorf("stripe: refund %s: unreadable answer %s", rec.ProviderRef, wire.Snippet(body))
	}
	if !ownRefund(re, t, op, rec) {
		return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
			fmt.Errorf("%w: %s is tagged %q of %q, not %q of %q", ErrForeignRefund, re.ID,
				re.Metadata[OpMetadataKey], re.Metadata[NamespaceMetadataKey], op.ID, t.Namespace)
	}
	return foundOp(re.verdict(idempay.Verdict{RequestID: v.RequestID})), nil
}

// ownRefund reports whether re is the refund attempt rec stands for: of
// the operation's PaymentIntent, tagged with its refund ID and intent,
// the Client's namespace and the attempt's key. A refund of an earlier
// attempt of the same refund ID (tagged with that attempt's key), another
// namespace's, or one made otherwise (untagged) says nothing of this one.
// A hand-made target or record without a namespace or key has nothing to
// compare there.
func ownRefund(re refund, t idempay.Target, op idempay.OpRequest, rec idempay.Record) bool {
	md := re.Metadata
	ns, hasNS := md[NamespaceMetadataKey]
	key, hasKey := md[KeyMetadataKey]
	pi := re.paymentIntentID()
	switch {
	case md[OpMetadataKey] != op.ID || md[IntentMetadataKey] != op.IntentID:
		return false
	case op.ChargeRef != "" && pi != "" && pi != op.ChargeRef:
		return false
	case t.Namespace != "" && (!hasNS || ns != t.Namespace):
		return false
	case rec.Key != "" && (!hasKey || key != rec.Key):
		return false
	}
	return true
}

// foundOp fills what the Client fills on an answer's refusal, since a
// lookup's goes another way: the provider and the status (200).
func foundOp(v idempay.Verdict) idempay.Verdict {
	if v.Err != nil {
		v.Err.Provider, v.Err.Status, v.Err.RequestID = "stripe", http.StatusOK, v.RequestID
	}
	if v.Operation != nil {
		v.Operation.RequestID = v.RequestID
	}
	return v
}

// findCapture tells whether the capture was made by retrieving the
// PaymentIntent (GET /v1/payment_intents/{id}, which reads Stripe's
// current state, not an index):
//
//   - succeeded and tagged with the capture's ID (idempay_op): captured,
//     amount_received being the amount; succeeded without that tag:
//     captured otherwise, unknown (ErrCapturedElsewhere);
//   - processing and tagged: pending;
//   - requires_capture: not captured, KindNotFound (the hold is intact;
//     Stripe would capture it now);
//   - canceled: never captured and never can be, KindDeclined;
//   - any other status, a PaymentIntent not tagged with the intent and
//     namespace, or no answer: unknown.
func (p Provider) findCapture(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest) (idempay.Verdict, error) {
	pi, v, err := p.retrieveOwn(ctx, hc, t, op)
	if err != nil || v.Kind != idempay.KindSucceeded {
		return v, err
	}
	v = idempay.Verdict{RequestID: v.RequestID}
	tagged := pi.Metadata[OpMetadataKey] == op.ID
	switch {
	case (pi.Status == "succeeded" || pi.Status == "processing") && tagged:
		return foundOp(pi.captureVerdict(v)), nil
	case pi.Status == "succeeded":
		v.Kind = idempay.KindUnknown
		return v, fmt.Errorf("%w: %s is succeeded and tagged idempay_op %q, not %q", ErrCapturedElsewhere, pi.ID,
			pi.Metadata[OpMetadataKey], op.ID)
	case pi.Status == "requires_capture":
		v.Kind = idempay.KindNotFound
		return v, nil
	case pi.Status == "canceled":
		v.Kind, v.Err = idempay.KindDeclined, canceledError(pi)
		return foundOp(v), nil
	}
	v.Kind = idempay.KindUnknown
	return v, nil
}

// findCancel tells whether the cancel was made by retrieving the
// PaymentIntent: canceled is voided (a cancel carries no tag at Stripe,
// and whoever cancelled it, the hold is released); requires_capture is not
// cancelled, KindNotFound; succeeded was captured and can never be
// cancelled, KindDeclined; anything else is unknown.
func (p Provider) findCancel(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest) (idempay.Verdict, error) {
	pi, v, err := p.retrieveOwn(ctx, hc, t, op)
	if err != nil || v.Kind != idempay.KindSucceeded {
		return v, err
	}
	v = idempay.Verdict{RequestID: v.RequestID}
	switch pi.Status {
	case "canceled":
		return foundOp(pi.cancelVerdict(v)), nil
	case "requires_capture":
		v.Kind = idempay.KindNotFound
		return v, nil
	case "succeeded":
		v.Kind, v.Err = idempay.KindDeclined, &idempay.APIError{Code: "payment_intent_unexpected_state",
			Message: "PaymentIntent " + pi.ID + " was captured; it cannot be cancelled"}
		return foundOp(v), nil
	}
	v.Kind = idempay.KindUnknown
	return v, nil
}

func canceledError(pi paymentIntent) *idempay.APIError {
	msg := "PaymentIntent " + pi.ID + " is canceled"
	if pi.CancellationReason != "" {
		msg += " (" + pi.CancellationReason + ")"
	}
	return &idempay.APIError{Code: "payment_intent_canceled", Message: msg}
}

// retrieveOwn retrieves the operation's PaymentIntent and checks that it
// is the intent's: tagged with its intent ID and the Client's namespace (or
// with the intent alone, as idempay tagged before namespaces: the
// reference is the intent's own record's). v.Kind is KindSucceeded when it
// is.
func (p Provider) retrieveOwn(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest) (paymentIntent, idempay.Verdict, error) {
	if err := checkRef(op.ChargeRef); err != nil {
		return paymentIntent{}, idempay.Verdict{Kind: idempay.KindUnknown}, err
	}
	v, body, err := p.get(ctx, hc, t, op.IntentID, t.BaseURL.JoinPath(paymentIntentsPath, op.ChargeRef))
	if err != nil || v.Kind != idempay.KindSucceeded {
		return paymentIntent{}, v, err
	}
	pi, ok := parseIntent(body)
	if !ok {
		return pi, idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
			fmt.Errorf("stripe: PaymentIntent %s: unreadable answer %s", op.ChargeRef, wire.Snippet(body))
	}
	owner := idempay.Record{Namespace: t.Namespace, ID: op.IntentID}
	if tags := pi.tags(); pi.ID != op.ChargeRef || wire.OwnerOf(tags, owner) == wire.Foreign {
		return pi, idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
			fmt.Errorf("%w: %s is tagged %q of %q, not %q of %q", ErrForeignIntent, pi.ID, tags.Intent, tags.Namespace,
				op.IntentID, t.Namespace)
	}
	return pi, v, nil
}
