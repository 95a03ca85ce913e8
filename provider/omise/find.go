package omise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// Errors of FindCharge and IntentOfCharge. Each leaves an intent's
// outcome unknown.
var (
	// ErrNoProof: no charge of the intent was found, but with
	// Provider.SavedCards that does not prove none exists.
	ErrNoProof = errors.New("omise: no charge found for the intent, which is no proof for a saved card")
	// ErrScanIncomplete: more charges were created since the intent's key
	// was reserved than Provider.MaxListPages lets a lookup read.
	ErrScanIncomplete = errors.New("omise: too many charges since the intent began to prove it has none")
	// ErrForeignCharge: the charge is tagged with another intent.
	ErrForeignCharge = errors.New("omise: charge belongs to another intent")
	// ErrNotIdempay: the charge carries no idempay intent ID.
	ErrNotIdempay = errors.New("omise: charge has no idempay intent in its metadata")
)

// listPage is the number of charges a list request asks for: Omise's
// maximum.
const listPage = 100

// maxLookupBody caps a lookup answer: a page of 100 charges fits easily.
const maxLookupBody = 8 << 20

// FindCharge looks the intent's charge up without creating anything: by
// ID when the record holds one (rec.ProviderRef), else by listing the
// charges created since the intent's key was reserved and matching
// metadata[idempay_intent]. A complete list without a match answers
// KindNotFound, the proof that lets the Client resend (see the package
// documentation for why that holds), except with SavedCards.
func (p Provider) FindCharge(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	if rec.ProviderRef != "" {
		c, err := p.retrieve(ctx, hc, t, rec.ProviderRef)
		if err != nil {
			return idempay.Verdict{Kind: idempay.KindUnknown}, err
		}
		// Every charge the adapter makes carries the tags: one without them
		// was not made for this intent, whatever the record says. The
		// record's own reference is the one place an intent tag without a
		// namespace is taken as this record's (wire.LegacyIsOwn).
		if tags := c.tags(); wire.OwnerOf(tags, rec) == wire.Foreign {
			return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("%w: %s is tagged %q of %q, not %q of %q",
				ErrForeignCharge, c.ID, tags.Intent, tags.Namespace, rec.ID, rec.Namespace)
		}
		return found(c, rec), nil
	}
	return p.scan(ctx, hc, t, rec)
}

// found is the verdict of a charge a lookup found for rec. It fills what
// the Client fills for a charge response, since not every path through
// the Client does so for lookups (the guard's, notably): the intent and
// key on the charge, and the provider and status (200) on a refusal.
func found(c charge, rec idempay.Record) idempay.Verdict {
	v := c.verdict(idempay.Verdict{})
	if v.Charge != nil {
		v.Charge.IntentID, v.Charge.Key = rec.ID, rec.Key
	}
	if v.Err != nil {
		v.Err.Provider, v.Err.Status = "omise", http.StatusOK
	}
	return v
}

// chargeList is a page of GET /charges.
type chargeList struct {
	Object string   `json:"object"`
	Total  int      `json:"total"`
	Data   []charge `json:"data"`
}

// scan lists the charges created since shortly before the key was
// reserved (the intent's charge, if any, was created after that) and
// matches the intent's tag. It first reads the newest page, where a charge
// whose answer was just lost is; if that page is not the whole window it
// reads the window oldest first, where a charge made by an earlier call
// is, to the end: only a pass to the end proves there is none. Oldest
// first is also what keeps the offsets stable while new charges are
// added at the newest end.
func (p Provider) scan(ctx context.Context, hc *http.Client, t idempay.Target, rec idempay.Record) (idempay.Verdict, error) {
	q := url.Values{"limit": {strconv.Itoa(listPage)}, "offset": {"0"}, "order": {"reverse_chronological"}}
	if !rec.CreatedAt.IsZero() {
		skew := p.ClockSkew
		if skew == 0 {
			skew = DefaultClockSkew
		}
		q.Set("from", rec.CreatedAt.Add(-skew).UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	m := matcher{rec: rec, claimant: p.LegacyNamespace}
	newest, err := p.list(ctx, hc, t, q)
	if err != nil {
		return idempay.Verdict{Kind: idempay.KindUnknown}, err
	}
	if c, ok := m.match(newest.Data); ok {
		return found(c, rec), nil
	}
	if len(newest.Data) >= newest.Total {
		return p.absent(m)
	}
	q.Set("order", "chronological")
	pages := p.MaxListPages
	if pages == 0 {
		pages = DefaultMaxListPages
	}
	for offset, page := 0, 0; page < pages; page++ {
		q.Set("offset", strconv.Itoa(offset))
		list, err := p.list(ctx, hc, t, q)
		if err != nil {
			return idempay.Verdict{Kind: idempay.KindUnknown}, err
		}
		if c, ok := m.match(list.Data); ok {
			return found(c, rec), nil
		}
		offset += len(list.Data)
		if offset >= list.Total {
			return p.absent(m)
		}
		if len(list.Data) == 0 {
			// An empty page short of the total contradicts it: the pass
			// cannot have seen every charge.
			return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("%w (empty page at offset %d of %d)", ErrScanIncomplete, offset, list.Total)
		}
	}
	return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("%w (%d pages of %d)", ErrScanIncomplete, pages, listPage)
}

// absent is the answer to a complete pass that found no charge: proof,
// unless saved cards are allowed (see Provider.SavedCards) or the pass saw
// a charge tagged with the intent alone that may be this intent's.
func (p Provider) absent(m matcher) (idempay.Verdict, error) {
	switch {
	case m.legacy != "":
		return idempay.Verdict{Kind: idempay.KindUnknown}, fmt.Errorf("%w: %s", ErrLegacyTag, m.legacy)
	case p.SavedCards:
		return idempay.Verdict{Kind: idempay.KindUnknown}, ErrNoProof
	}
	return idempay.Verdict{Kind: idempay.KindNotFound}, nil
}

// matcher finds the record's charge in list pages by its tags, and
// remembers a charge tagged with the intent alone that it could not take
// as the record's (wire.LegacyIsOwn: found by listing, it is only the
// record's when Provider.LegacyNamespace says so).
type matcher struct {
	rec      idempay.Record
	claimant string
	legacy   string // ID of a Legacy charge not taken
}

func (m *matcher) match(cs []charge) (charge, bool) {
	for _, c := range cs {
		if c.ID == "" {
			continue
		}
		switch wire.OwnerOf(c.tags(), m.rec) {
		case wire.Own:
			return c, true
		case wire.Legacy:
			if wire.LegacyIsOwn(m.rec, false, m.claimant) {
				return c, true
			}
			m.legacy = c.ID
		}
	}
	return charge{}, false
}

func (p Provider) list(ctx context.Context, hc *http.Client, t idempay.Target, q url.Values) (chargeList, error) {
	u := t.BaseURL.JoinPath(chargesPath)
	u.RawQuery = q.Encode()
	var l chargeList
	if err := p.get(ctx, hc, t, u, &l); err != nil {
		return chargeList{}, err
	}
	if l.Object != "list" {
		// Anything else (an error object, an empty object from a proxy)
		// has no total and no data, which would read as "no charge".
		return chargeList{}, fmt.Errorf("omise: lookup %s: answer is not a list (object %q)", u.Path, l.Object)
	}
	return l, nil
}

func (p Provider) retrieve(ctx context.Context, hc *http.Client, t idempay.Target, id string) (charge, error) {
	var raw json.RawMessage
	if err := p.get(ctx, hc, t, t.BaseURL.JoinPath(chargesPath, id), &raw); err != nil {
		return charge{}, err
	}
	c, ok := parseCharge(raw)
	if !ok {
		return charge{}, fmt.Errorf("omise: charge %s: unreadable answer %s", id, wire.Snippet(raw))
	}
	return c, nil
}

// get sends one lookup and decodes a 2xx answer into out; any other
// answer is an error carrying Omise's explanation.
func (p Provider) get(ctx context.Context, hc *http.Client, t idempay.Target, u *url.URL, out any) error {
	if hc == nil {
		hc = http.DefaultClient
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	p.authorize(r, t)
	resp, err := hc.Do(r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLookupBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e, _ := readError(body)
		return fmt.Errorf("omise: lookup %s: %w", u.Path, &idempay.APIError{Provider: "omise", Status: resp.StatusCode,
			Code: e.Code, Message: e.Message, RequestID: requestID(resp.Header)})
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("omise: lookup %s: unreadable answer %s", u.Path, wire.Snippet(body))
	}
	return nil
}
