package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Errors of FindCharge. Each leaves the intent's outcome unknown.
var (
	// ErrNotIndexed: search found no PaymentIntent for the intent. Stripe's
	// search is eventually consistent (data is usually searchable within a
	// minute, later during incidents), so this is no proof that none
	// exists; look again later.
	ErrNotIndexed = errors.New("stripe: search found no PaymentIntent for the intent (search lags writes: not proof that none exists)")
	// ErrAmbiguous: search found several PaymentIntents tagged with the
	// intent. idempay never makes two, so someone must reconcile them.
	ErrAmbiguous = errors.New("stripe: several PaymentIntents carry the intent")
	// ErrForeignIntent: the PaymentIntent stored as the intent's reference
	// is tagged with another intent.
	ErrForeignIntent = errors.New("stripe: PaymentIntent belongs to another intent")
)

// maxLookupBody caps a lookup answer; a search page of ten intents is far
// below it.
const maxLookupBody = 1 << 20

// FindCharge looks the intent's PaymentIntent up without creating
// anything: by ID when the record holds one (rec.ProviderRef), else by
// searching metadata['idempay_intent']. It answers the PaymentIntent's
// verdict when found, and an error (never KindNotFound) when not: search
// results lag writes, so not finding is not proof. hc nil means
// http.DefaultClient.
func (p Provider) FindCharge(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	if rec.ProviderRef != "" {
		return p.retrieve(ctx, hc, t, rec)
	}
	return p.search(ctx, hc, t, rec)
}

func (p Provider) retrieve(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	u := t.BaseURL.JoinPath(paymentIntentsPath, rec.ProviderRef)
	v, body, err := p.get(ctx, hc, t, rec.ID, u)
	if err != nil || v.Kind != idempay.KindSucceeded {
		return v, err
	}
	pi, ok := parseIntent(body)
	if !ok {
		return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("stripe: PaymentIntent %s: unreadable answer %s", rec.ProviderRef, wire.Snippet(body))
	}
	// Every PaymentIntent the adapter creates carries the tags: one without
	// them was not made for this intent, whatever the record says. The
	// record's own reference is the one place an intent tag without a
	// namespace is taken as this record's (wire.LegacyIsOwn).
	if tags := pi.tags(); wire.OwnerOf(tags, rec) == wire.Foreign {
		return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("%w: %s is tagged %q of %q, not %q of %q",
			ErrForeignIntent, pi.ID, tags.Intent, tags.Namespace, rec.ID, rec.Namespace)
	}
	return found(pi, rec, v.RequestID), nil
}

// found is the verdict of a PaymentIntent a lookup found for rec. It fills
// what the Client fills for a charge response, since not every path
// through the Client does so for lookups: the intent and key on the
// charge, and the provider and status (200) on a refusal.
func found(pi paymentIntent, rec idempay.Record, requestID string) idempay.Verdict {
	v := pi.verdict(idempay.Verdict{RequestID: requestID})
	if v.Charge != nil {
		v.Charge.IntentID, v.Charge.Key, v.Charge.RequestID = rec.ID, rec.Key, requestID
	}
	if v.Err != nil {
		v.Err.Provider, v.Err.Status, v.Err.RequestID = "stripe", http.StatusOK, requestID
	}
	return v
}

func (p Provider) search(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	u := t.BaseURL.JoinPath(paymentIntentsPath, "search")
	u.RawQuery = url.Values{"query": {SearchQuery(rec.ID)}, "limit": {"10"}}.Encode()
	v, body, err := p.get(ctx, hc, t, rec.ID, u)
	if err != nil || v.Kind != idempay.KindSucceeded {
		return v, err
	}
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("stripe: search: unreadable answer %s", wire.Snippet(body))
	}
	var own, legacy []paymentIntent
	for _, raw := range page.Data {
		// Search matches the clause; the exact tags are checked again here
		// so that nothing but this record's PaymentIntent can settle it.
		pi, ok := parseIntent(raw)
		if !ok {
			continue
		}
		switch wire.OwnerOf(pi.tags(), rec) {
		case wire.Own:
			own = append(own, pi)
		case wire.Legacy:
			legacy = append(legacy, pi)
		}
	}
	if len(own) == 0 && len(legacy) > 0 {
		if !wire.LegacyIsOwn(rec, false, p.LegacyNamespace) {
			return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
				fmt.Errorf("%w: %s", ErrLegacyTag, idsOf(legacy))
		}
		own = legacy
	}
	switch len(own) {
	case 0:
		return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID}, ErrNotIndexed
	case 1:
		return found(own[0], rec, v.RequestID), nil
	}
	return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID},
		fmt.Errorf("%w %q: %s", ErrAmbiguous, rec.ID, idsOf(own))
}

func idsOf(pis []paymentIntent) string {
	ids := make([]string, len(pis))
	for i, pi := range pis {
		ids[i] = pi.ID
	}
	return strings.Join(ids, ", ")
}

// get sends one lookup for intentID's charge or operations (on its
// connected account, if it has one). A 2xx comes back as KindSucceeded
// with its body; any other answer as an error carrying Stripe's
// explanation.
func (p Provider) get(ctx context.Context, hc *http.Client, t idempay.Target, intentID string, u *url.URL) (idempay.Verdict, []byte, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return idempay.Verdict{}, nil, err
	}
	p.authorize(r, t, intentID)
	resp, err := hc.Do(r)
	if err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLookupBody))
	if err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, nil, err
	}
	v := idempay.Verdict{Kind: idempay.KindSucceeded, RequestID: resp.Header.Get("Request-Id")}
	if resp.StatusCode/100 == 2 {
		return v, body, nil
	}
	e := readError(body).apiError()
	e.Provider, e.Status, e.RequestID = "stripe", resp.StatusCode, v.RequestID
	return idempay.Verdict{Kind: idempay.KindUnknown, RequestID: v.RequestID}, nil, fmt.Errorf("stripe: lookup %s: %w", u.Path, e)
}

// SearchQuery returns the Stripe search query that matches PaymentIntents
// tagged with intentID. The value is single-quoted, with backslashes and
// single quotes escaped by a backslash, so that no intent ID can change
// the query's meaning.
func SearchQuery(intentID string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "metadata['" + IntentMetadataKey + "']:'" + r.Replace(intentID) + "'"
}
