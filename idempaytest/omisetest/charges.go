package omisetest

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Charge is the fake's charge, in Omise's JSON shape (the fields the
// adapter reads, and a few more).
type Charge struct {
	Object         string         `json:"object"`          // "charge"
	ID             string         `json:"id"`              // chrg_test_...
	Location       string         `json:"location"`        // /charges/{id}
	Livemode       bool           `json:"livemode"`        // always false
	Amount         int64          `json:"amount"`          // smallest unit
	Currency       string         `json:"currency"`        // upper case
	Description    *string        `json:"description"`     // null when absent
	Metadata       map[string]any `json:"metadata"`        // any JSON; idempay's tags among them
	Status         string         `json:"status"`          // successful, failed or pending
	Capture        bool           `json:"capture"`         // false: authorise only
	Authorized     bool           `json:"authorized"`      // the card issuer authorised it
	Paid           bool           `json:"paid"`            // captured
	AuthorizeURI   *string        `json:"authorize_uri"`   // set while waiting for the customer
	ReturnURI      *string        `json:"return_uri"`      // where the customer comes back
	FailureCode    *string        `json:"failure_code"`    // set when failed
	FailureMessage *string        `json:"failure_message"` // set when failed
	Customer       *string        `json:"customer"`        // null when absent
	Expired        bool           `json:"expired"`         // as the real charge object carries
	Reversed       bool           `json:"reversed"`        // as the real charge object carries
	Created        string         `json:"created_at"`      // ISO 8601
	// What was charged, as Omise's real charges carry it (the fixtures in
	// provider/omise/testdata): the card object for a card charge (a
	// token's new card, or the saved card charged), the source object for
	// a source charge. The source's ID, and a saved card's, are the
	// request's Source.
	Card   *Card   `json:"card"`
	Source *Source `json:"source"` // a source charge's source object, or null
	// What can be done with the charge, and what was refunded, as Omise's
	// charge object says it: capturable and reversible while an
	// authorisation waits, refundable once paid until fully refunded.
	Capturable     bool  `json:"capturable"`
	Reversible     bool  `json:"reversible"`      // an authorisation that can be reversed
	Refundable     bool  `json:"refundable"`      // paid and not fully refunded
	RefundedAmount int64 `json:"refunded_amount"` // summed over its refunds
	// What an authorisation holds and what was captured of it (less than
	// the amount after a partial capture), as Omise's charge object says
	// (authorized_amount, captured_amount) on a pre_auth charge: absent
	// until authorised, and captured 0 until paid. A default (final_auth)
	// charge carries neither, as Omise's answers of such charges show,
	// unless the fake captured it in part (which Omise documents for
	// pre_auth only): then both, so that the answer says what moved.
	AuthorizedAmount *int64      `json:"authorized_amount,omitempty"`
	CapturedAmount   *int64      `json:"captured_amount,omitempty"`
	Refunds          *RefundList `json:"refunds"`     // its refunds, oldest first
	ReversedAt       *string     `json:"reversed_at"` // ISO 8601, null unless reversed
	Voided           bool        `json:"voided"`      // always false: no settlement is modelled

	captured int64 // what was captured: the amount, or less with capture_amount
	preAuth  bool  // authorization_type pre_auth
	account  string
	key      string
	at       time.Time
}

// Card is the card object of a card charge, in Omise's shape (a few of
// its fields).
type Card struct {
	Object      string `json:"object"`      // "card"
	ID          string `json:"id"`          // card_test_...
	Livemode    bool   `json:"livemode"`    // always false
	Brand       string `json:"brand"`       // Visa
	LastDigits  string `json:"last_digits"` // 4242
	Fingerprint string `json:"fingerprint"` // fp_test_...
	Name        string `json:"name"`        // JOHN DOE
}

// Source is the source object of a source charge, in Omise's shape (a few
// of its fields).
type Source struct {
	Object   string `json:"object"`   // "source"
	ID       string `json:"id"`       // src_..., as sent
	Livemode bool   `json:"livemode"` // always false
	Type     string `json:"type"`     // e.g. "promptpay"
	Flow     string `json:"flow"`     // "offline" or "redirect"
	Amount   int64  `json:"amount"`   // the charge's
	Currency string `json:"currency"` // the charge's, upper case
}

func (c *Charge) clone() Charge {
	out := *c
	out.Metadata = maps.Clone(c.Metadata)
	if c.Refunds != nil {
		l := *c.Refunds
		l.Data = make([]Refund, len(c.Refunds.Data))
		for i := range l.Data {
			l.Data[i] = c.Refunds.Data[i].clone()
		}
		out.Refunds = &l
	}
	if c.Card != nil {
		card := *c.Card
		out.Card = &card
	}
	if c.Source != nil {
		src := *c.Source
		out.Source = &src
	}
	return out
}

// chargedWith is the card or source object of the charge p creates: a
// token becomes a new card, a card ID is that card, a customer alone is
// charged on its default card.
func chargedWith(p createParams) (*Card, *Source) {
	if p.source != "" {
		typ, flow := "promptpay", "offline"
		if strings.Contains(p.source, "3ds") || strings.Contains(p.source, "internet_banking") {
			typ, flow = "internet_banking_bbl", "redirect"
		}
		return nil, &Source{Object: "source", ID: p.source, Type: typ, Flow: flow, Amount: p.amount,
			Currency: strings.ToUpper(p.currency)}
	}
	id := p.card
	if !strings.HasPrefix(id, "card_") {
		id = newID("card")
	}
	return &Card{Object: "card", ID: id, Brand: "Visa", LastDigits: "4242", Fingerprint: newID("fp"),
		Name: "JOHN DOE"}, nil
}

// charged reports whether the charge moved money or holds an authorisation.
func (c *Charge) charged() bool {
	return c.Status == "successful" || (c.Status == "pending" && c.Authorized)
}

func (c *Charge) fail(code, message string) {
	c.Status, c.FailureCode, c.FailureMessage = "failed", &code, &message
	c.Authorized, c.Paid, c.AuthorizeURI = false, false, nil
	c.derive()
}

// derive sets what can be done with the charge from where it stands.
func (c *Charge) derive() {
	c.Capturable = c.Status == "pending" && c.Authorized && !c.Capture
	c.Reversible = c.Capturable
	c.Refundable = c.Paid && c.RefundedAmount < c.captured && len(c.Refunds.Data) < maxRefunds
	c.AuthorizedAmount, c.CapturedAmount = nil, nil
	if !c.preAuth && (c.captured == 0 || c.captured == c.Amount) {
		return
	}
	if c.Authorized {
		// Fresh values, never pointers into c: copies of the charge are
		// handed out while the stored one changes.
		authorized, captured := c.Amount, c.captured
		c.AuthorizedAmount, c.CapturedAmount = &authorized, &captured
	}
}

// succeed completes the charge: paid, or authorised and waiting for capture.
func (c *Charge) succeed() {
	c.Authorized, c.AuthorizeURI = true, nil
	if c.Capture {
		c.Status, c.Paid, c.captured = "successful", true, c.Amount
	} else {
		c.Status = "pending"
	}
	c.derive()
}

// newCharge builds the charge a create request makes.
func newCharge(p createParams, account, key string, now time.Time) *Charge {
	id := newID("chrg")
	meta := map[string]any{}
	for k, v := range p.metadata {
		meta[k] = v
	}
	c := &Charge{Object: "charge", ID: id, Location: "/charges/" + id, Amount: p.amount,
		Currency: strings.ToUpper(p.currency), Metadata: meta, Capture: p.capture,
		Created: now.UTC().Format(time.RFC3339), account: account, key: key, at: now, preAuth: p.preAuth}
	c.Refunds = newRefundList(id)
	c.Description, c.ReturnURI, c.Customer = optional(p.description), optional(p.returnURI), optional(p.customer)
	c.Card, c.Source = chargedWith(p)
	what := strings.ToLower(p.card + p.source)
	switch {
	case strings.Contains(what, "decline"):
		c.fail("insufficient_fund", "insufficient funds in the account or the card has reached the credit limit")
	case strings.Contains(what, "3ds") || strings.HasPrefix(p.source, "src_"):
		uri := "https://pay.omise.test/offsites/" + id + "/pay"
		c.Status, c.AuthorizeURI = "pending", &uri
	default:
		c.succeed()
	}
	return c
}

// neighbourCharge is a charge another integration on the account made,
// shaped as the ones on Omise's recorded staging page: its metadata holds
// numbers and booleans beside strings, and every fourth one was declined.
func neighbourCharge(account string, n int, now time.Time) *Charge {
	id := newID("chrg")
	c := &Charge{Object: "charge", ID: id, Location: "/charges/" + id, Amount: 80245, Currency: "THB",
		Metadata: map[string]any{"payment_attempt_id": n, "platform": "shopify", "version": "local",
			"x_test": true, "x_account": "account_test_neighbour", "order_id": strconv.Itoa(1000 + n)},
		Capture: true, Created: now.UTC().Format(time.RFC3339), account: account, at: now}
	c.Refunds = newRefundList(id)
	if n%4 == 0 {
		c.fail("insufficient_fund", "insufficient funds in the account or the card has reached the credit limit")
	} else {
		c.succeed()
	}
	return c
}

// intentOf is the charge's idempay intent tag, if it has one.
func (c *Charge) intentOf() string {
	s, _ := c.Metadata[fakes.IntentMetadataKey].(string)
	return s
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// chargeStore keeps every charge and which single-use tokens and sources
// were consumed.
type chargeStore struct {
	mu        sync.Mutex
	byID      map[string]*Charge
	byAccount map[string][]*Charge // each in creation order, for listing
	used      map[string]bool
}

func newChargeStore() *chargeStore {
	return &chargeStore{byID: map[string]*Charge{}, byAccount: map[string][]*Charge{}, used: map[string]bool{}}
}

// consume marks a single-use token or source as used; it reports false if
// it already was.
func (st *chargeStore) consume(account, id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	k := account + "\x00" + id
	if st.used[k] {
		return false
	}
	st.used[k] = true
	return true
}

// add stores a charge and, when ledger is not nil and it moved money (or
// holds an authorisation), enters it in the books.
func (st *chargeStore) add(c *Charge, ledger *fakes.Ledger) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.byID[c.ID] = c
	// Handlers finish out of order: insert at the charge's place in time.
	list := st.byAccount[c.account]
	i, _ := slices.BinarySearchFunc(list, c, compareCreation)
	st.byAccount[c.account] = slices.Insert(list, i, c)
	if ledger != nil && c.charged() {
		ledger.Add(entry(c))
	}
}

func entry(c *Charge) fakes.Charge {
	return fakes.Charge{ID: c.ID, Merchant: c.account, Intent: c.intentOf(), Key: c.key,
		Amount: c.Amount, Currency: c.Currency, Authorized: !c.Capture, Time: c.at}
}

// update runs f on a stored charge under the store's lock; it reports
// whether the charge exists.
func (st *chargeStore) update(id string, f func(*Charge)) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, ok := st.byID[id]
	if ok {
		f(c)
		c.derive()
	}
	return ok
}

func (st *chargeStore) get(id string) (Charge, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, ok := st.byID[id]
	if !ok {
		return Charge{}, false
	}
	return c.clone(), true
}

func (st *chargeStore) complete(id string, succeed bool, ledger *fakes.Ledger) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, ok := st.byID[id]
	if !ok || c.Status != "pending" || c.Authorized {
		return false
	}
	if !succeed {
		c.fail("payment_rejected", "the payment was rejected by the issuer")
		return true
	}
	c.succeed()
	ledger.Add(entry(c))
	return true
}

// list returns the page [offset, offset+limit) of the account's charges
// created in [from, to] at Omise's one-second precision, oldest first (or
// newest first if reverse), and how many there are in all.
func (st *chargeStore) list(account string, from, to time.Time, offset, limit int, reverse bool) ([]Charge, int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	all := st.byAccount[account]
	lo := sort.Search(len(all), func(i int) bool { return !all[i].at.Truncate(time.Second).Before(from) })
	hi := sort.Search(len(all), func(i int) bool { return all[i].at.Truncate(time.Second).After(to) })
	window := all[lo:max(lo, hi)]
	page := []Charge{}
	for i := offset; i < len(window) && i < offset+limit; i++ {
		j := i
		if reverse {
			j = len(window) - 1 - i
		}
		page = append(page, window[j].clone())
	}
	return page, len(window)
}

func compareCreation(a, b *Charge) int {
	if n := a.at.Compare(b.at); n != 0 {
		return n
	}
	return strings.Compare(a.ID, b.ID)
}

// unconsume gives back a token or source whose charge was never recorded.
func (st *chargeStore) unconsume(account, id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.used, account+"\x00"+id)
}

// updateRefund runs f on a stored refund and its charge under the store's
// lock; it reports whether the refund exists.
func (st *chargeStore) updateRefund(id string, f func(*Charge, *Refund)) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, c := range st.byID {
		for i := range c.Refunds.Data {
			if c.Refunds.Data[i].ID == id {
				f(c, &c.Refunds.Data[i])
				c.derive()
				return true
			}
		}
	}
	return false
}
