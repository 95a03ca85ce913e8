package omise

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/idempay/idempay"
)

// Errors of FindOp. Each leaves the
// operation's outcome unknown.
var (
	// ErrDuplicateRefund: two refunds of the charge carry the refund's ID
	// and key. Money went back twice; nothing settles that but a person.
	ErrDuplicateRefund = errors.New("omise: more than one refund carries the refund ID and key")
	// ErrForeignRefund: the refund the record names is tagged for another
	// refund ID, namespace or attempt.
	ErrForeignRefund = errors.New("omise: refund belongs to another refund ID, namespace or attempt")
	// ErrAmbiguousRefund: a refund carries the refund ID but lacks the
	// namespace or key tag that would say whose it is (or could not be
	// read): it may be this refund, so nothing is proved either way.
	ErrAmbiguousRefund = errors.New("omise: a refund carries the refund ID without the tags that say whose it is")
	// ErrCaptureMismatch: the charge was captured, but not as the capture
	// asked (another amount, or captured when it was made).
	ErrCaptureMismatch = errors.New("omise: the charge was captured, but not by this capture")
	// ErrMultiCapture: a charge with multiple partial capture can be
	// captured again, so an uncaptured amount proves nothing.
	ErrMultiCapture = errors.New("omise: a multi-capture charge proves no capture absent")
)

// refundList is a page of GET /charges/{id}/refunds; its refunds are read
// one by one, so that one of an unknown shape is seen, not skipped.
type refundList struct {
	Object string            `json:"object"`
	Total  int               `json:"total"`
	Data   []json.RawMessage `json:"data"`
}

// findRefund looks the refund up without creating anything: by its ID
// when the record holds one (a pending refund: GET
// /charges/{charge}/refunds/{id}), else by reading the charge's refunds
// (GET /charges/{charge}/refunds, 100 a page, oldest first, every page)
// for the one tagged with the refund ID, the Client's namespace and the
// attempt's key. A refund tagged so answers by its status. A pass over
// every page without one is read again RefundRecheck later, and two such
// passes answer KindNotFound, which lets the Client resend (see
// Provider.RefundRecheck for what that proof rests on).
func (p Provider) findRefund(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	if rec.ProviderRef != "" {
		return p.retrieveRefund(ctx, hc, t, op, rec)
	}
	v, err := p.scanRefunds(ctx, hc, t, op, rec)
	if err != nil || v.Kind != idempay.KindNotFound {
		return v, err
	}
	d := cmp.Or(p.RefundRecheck, DefaultRefundRecheck)
	if d < 0 {
		return v, nil
	}
	if err := sleep(ctx, d); err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, err
	}
	return p.scanRefunds(ctx, hc, t, op, rec)
}

// owner says whose a refund is, by its tags, for op's current attempt.
type owner int

const (
	notOurs owner = iota
	ours
	maybeOurs
)

func (r refund) owner(t idempay.Target, op idempay.OpRequest, rec idempay.Record) owner {
	if id, _ := metaString(r.Metadata, OpMetadataKey); id != op.ID {
		return notOurs
	}
	ns, hasNS := metaString(r.Metadata, NamespaceMetadataKey)
	key, hasKey := metaString(r.Metadata, KeyMetadataKey)
	switch {
	case hasNS && t.Namespace != "" && ns != t.Namespace:
		return notOurs // another account's refund with the same refund ID
	case hasKey && rec.Key != "" && key != rec.Key:
		return notOurs // another attempt's
	case !hasKey || (!hasNS && t.Namespace != ""):
		return maybeOurs // the adapter tags every refund with both
	}
	return ours
}

// found is the verdict of a refund a lookup found: its status, with what
// the Client fills for an answer filled here, as for charges.
func (r refund) found() idempay.Verdict {
	v := r.verdict(idempay.Verdict{})
	if v.Err != nil {
		v.Err.Provider, v.Err.Status = "omise", http.StatusOK
	}
	return v
}

func (p Provider) retrieveRefund(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	unknown := idempay.Verdict{Kind: idempay.KindUnknown}
	u, err := chargePath(t, op.ChargeRef, "refunds", rec.ProviderRef)
	if err != nil {
		return unknown, err
	}
	var raw json.RawMessage
	if err := p.get(ctx, hc, t, u, &raw); err != nil {
		return unknown, err
	}
	r, ok := parseRefund(raw)
	if !ok {
		return unknown, fmt.Errorf("omise: refund %s: unreadable answer", rec.ProviderRef)
	}
	if r.owner(t, op, rec) != ours {
		return unknown, fmt.Errorf("%w: %s, looked up for refund %q", ErrForeignRefund, r.ID, op.ID)
	}
	return r.found(), nil
}

// scanRefunds reads every page of the charge's refunds. It answers the
// one refund tagged for op's attempt, KindNotFound after a pass over every
// page without one, and an error when the pass proves nothing (cut short,
// a refund that may be this one, two that are).
func (p Provider) scanRefunds(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	unknown := idempay.Verdict{Kind: idempay.KindUnknown}
	u, err := chargePath(t, op.ChargeRef, "refunds")
	if err != nil {
		return unknown, err
	}
	pages := cmp.Or(p.MaxListPages, DefaultMaxListPages)
	var mine []refund
	maybe := ""
	for offset, page := 0, 0; ; page++ {
		if page == pages {
			return unknown, fmt.Errorf("%w (%d pages of %d refunds)", ErrScanIncomplete, pages, listPage)
		}
		u.RawQuery = url.Values{"limit": {strconv.Itoa(listPage)}, "offset": {strconv.Itoa(offset)},
			"order": {"chronological"}}.Encode()
		var l refundList
		if err := p.get(ctx, hc, t, u, &l); err != nil {
			return unknown, err
		}
		if l.Object != "list" {
			return unknown, fmt.Errorf("omise: lookup %s: answer is not a list (object %q)", u.Path, l.Object)
		}
		for _, raw := range l.Data {
			r, ok := parseRefund(raw)
			switch {
			case !ok:
				maybe = "an unreadable refund"
			case r.owner(t, op, rec) == ours:
				mine = append(mine, r)
			case r.owner(t, op, rec) == maybeOurs:
				maybe = r.ID
			}
		}
		offset += len(l.Data)
		if offset >= l.Total {
			break
		}
		if len(l.Data) == 0 {
			return unknown, fmt.Errorf("%w (empty page at offset %d of %d)", ErrScanIncomplete, offset, l.Total)
		}
	}
	switch {
	case len(mine) > 1:
		return unknown, fmt.Errorf("%w: %s and %s of refund %q", ErrDuplicateRefund, mine[0].ID, mine[1].ID, op.ID)
	case len(mine) == 1:
		return mine[0].found(), nil
	case maybe != "":
		return unknown, fmt.Errorf("%w: %s", ErrAmbiguousRefund, maybe)
	}
	return idempay.Verdict{Kind: idempay.KindNotFound}, nil
}

// FindOp looks the operation up without making anything: a refund as
// findRefund says; a capture or cancel by retrieving the charge (GET
// /charges/{id}). Captured for the capture's amount is the capture
// succeeded, reversed the cancel succeeded; reversed, expired or failed
// without being paid is a capture that can never be made, and captured,
// expired or failed a reverse that can never be made (KindDeclined); still
// authorised is KindNotFound (Omise captures a charge once, and a resent
// reverse releases nothing twice); anything else is unknown.
func (p Provider) FindOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest, rec idempay.Record) (idempay.Verdict, error) {
	if op.Type == idempay.OpRefund {
		return p.findRefund(ctx, hc, t, op, rec)
	}
	return p.findChargeOp(ctx, hc, t, op)
}

func (p Provider) findChargeOp(ctx context.Context, hc *http.Client, t idempay.Target, op idempay.OpRequest) (idempay.Verdict, error) {
	unknown := idempay.Verdict{Kind: idempay.KindUnknown}
	if _, err := chargePath(t, op.ChargeRef); err != nil {
		return unknown, err
	}
	c, err := p.retrieve(ctx, hc, t, op.ChargeRef)
	if err != nil {
		return unknown, err
	}
	tags := c.tags()
	if tags.Intent != op.IntentID || (tags.HasNamespace && t.Namespace != "" && tags.Namespace != t.Namespace) {
		return unknown, fmt.Errorf("%w: %s is tagged %q of %q, not %q of %q", ErrForeignCharge, c.ID,
			tags.Intent, tags.Namespace, op.IntentID, t.Namespace)
	}
	v := c.opVerdict(op.Type, idempay.Verdict{}, op.Amount, true)
	switch {
	case v.Kind == idempay.KindUnknown && op.Type == idempay.OpCapture && c.paidOut():
		return v, fmt.Errorf("%w: %s captured %d (status %q), the capture asked %d", ErrCaptureMismatch, c.ID,
			cmp.Or(c.CapturedAmount, c.Amount), c.Status, op.Amount)
	case v.Kind == idempay.KindUnknown && c.open() && c.MultiCapture:
		return v, fmt.Errorf("%w: %s", ErrMultiCapture, c.ID)
	case v.Kind == idempay.KindUnknown:
		return v, fmt.Errorf("omise: charge %s (status %q) says nothing of the %s", c.ID, c.Status, op.Type)
	case v.Err != nil:
		v.Err.Provider, v.Err.Status = "omise", http.StatusOK
	}
	return v, nil
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
