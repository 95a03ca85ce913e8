package stripetest

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
	"github.com/idempay/idempay/internal/faults"
)

// PaymentIntent is the fake's PaymentIntent, in Stripe's JSON shape (the
// fields the adapter reads, and a few more).
type PaymentIntent struct {
	ID                 string            `json:"id"`                  // pi_...
	Object             string            `json:"object"`              // "payment_intent"
	Amount             int64             `json:"amount"`              // in Stripe's units
	Currency           string            `json:"currency"`            // lower case
	Status             string            `json:"status"`              // succeeded, requires_action, ...
	CaptureMethod      string            `json:"capture_method"`      // automatic, automatic_async or manual
	Customer           *string           `json:"customer"`            // null when absent
	Description        *string           `json:"description"`         // null when absent
	PaymentMethod      *string           `json:"payment_method"`      // null when absent
	Metadata           map[string]string `json:"metadata"`            // idempay_intent among them
	NextAction         *NextAction       `json:"next_action"`         // set in requires_action
	LastPaymentError   *apiError         `json:"last_payment_error"`  // the refusal of the last confirmation
	CancellationReason *string           `json:"cancellation_reason"` // null unless canceled
	Created            int64             `json:"created"`             // Unix seconds
	Livemode           bool              `json:"livemode"`            // always false
	// As Stripe's real PaymentIntents carry them (the OpenAPI fixtures,
	// recorded test-mode answers): the client secret a frontend confirms
	// with, and the charge of the last confirmation.
	ClientSecret       string   `json:"client_secret"`        // pi_..._secret_...
	ConfirmationMethod string   `json:"confirmation_method"`  // automatic
	PaymentMethodTypes []string `json:"payment_method_types"` // ["card"]
	AmountReceived     int64    `json:"amount_received"`      // set once succeeded: the amount, or what was captured
	LatestCharge       *string  `json:"latest_charge"`        // ch_..., null before a confirmation
	// What an authorisation holds (requires_capture), zero otherwise, and
	// when the intent was canceled.
	AmountCapturable int64  `json:"amount_capturable"`
	CanceledAt       *int64 `json:"canceled_at"` // Unix seconds, null unless canceled

	account string    // the secret that created it: lookups are scoped to it
	key     string    // the idempotency key that created it
	at      time.Time // creation, for search visibility
}

// NextAction is what a requires_action PaymentIntent waits for.
type NextAction struct {
	Type          string         `json:"type"`                      // "redirect_to_url"
	RedirectToURL *RedirectToURL `json:"redirect_to_url,omitempty"` // where to send the customer
}

// RedirectToURL is where to send the customer for 3-D Secure.
type RedirectToURL struct {
	URL       string `json:"url"`                  // the 3-D Secure page
	ReturnURL string `json:"return_url,omitempty"` // where the customer comes back
}

func (pi *PaymentIntent) clone() PaymentIntent {
	c := *pi
	c.Metadata = maps.Clone(pi.Metadata)
	c.PaymentMethodTypes = slices.Clone(pi.PaymentMethodTypes)
	if pi.NextAction != nil {
		na := *pi.NextAction
		c.NextAction = &na
	}
	if pi.LastPaymentError != nil {
		e := *pi.LastPaymentError
		c.LastPaymentError = &e
	}
	if pi.CanceledAt != nil {
		at := *pi.CanceledAt
		c.CanceledAt = &at
	}
	return c
}

// charged reports whether the intent moved money (or holds an authorisation).
func (pi *PaymentIntent) charged() bool {
	return pi.Status == "succeeded" || pi.Status == "requires_capture"
}

func (pi *PaymentIntent) ledgerEntry(now time.Time) fakes.Charge {
	return fakes.Charge{ID: pi.ID, Merchant: pi.account, Intent: pi.Metadata[fakes.IntentMetadataKey], Key: pi.key,
		Amount: pi.Amount, Currency: pi.Currency, Authorized: pi.Status == "requires_capture", Time: now}
}

// newIntent builds the PaymentIntent a create request makes and, for a
// decline, the error to answer with.
func newIntent(p createParams, account, key string, now time.Time) (*PaymentIntent, *apiError) {
	pi := &PaymentIntent{ID: newID("pi_"), Object: "payment_intent", Amount: p.amount, Currency: p.currency,
		CaptureMethod: p.captureMethod, Metadata: p.metadata, Created: now.Unix(),
		ConfirmationMethod: "automatic", PaymentMethodTypes: []string{"card"},
		account: account, key: key, at: now}
	pi.ClientSecret = pi.ID + "_secret_" + newID("")
	if p.confirm {
		pi.LatestCharge = optional(newID("ch_"))
	}
	pi.Customer, pi.Description, pi.PaymentMethod = optional(p.customer), optional(p.description), optional(paymentMethodID(p.paymentMethod))
	pm := strings.ToLower(p.paymentMethod)
	switch {
	case !p.confirm:
		pi.Status = "requires_payment_method"
	case strings.Contains(pm, "decline"):
		e := &apiError{Type: faults.TypeCard, Code: "card_declined", DeclineCode: "generic_decline", Param: "payment_method",
			Message: "Your card was declined.", DocURL: "https://stripe.com/docs/error-codes/card-declined",
			Charge: *pi.LatestCharge}
		if strings.Contains(pm, "insufficient") {
			e.DeclineCode, e.Message = "insufficient_funds", "Your card has insufficient funds."
		}
		pi.Status, pi.LastPaymentError = "requires_payment_method", e
		withIntent := *e
		snapshot := pi.clone()
		withIntent.PaymentIntent = &snapshot
		return pi, &withIntent
	case strings.Contains(pm, "3ds") || strings.Contains(pm, "threedsecure"):
		pi.Status = "requires_action"
		pi.NextAction = &NextAction{Type: "redirect_to_url", RedirectToURL: &RedirectToURL{
			URL: "https://hooks.stripe.test/3d_secure_2/authenticate/" + pi.ID, ReturnURL: p.returnURL}}
	case strings.Contains(pm, "processing"):
		pi.Status = "processing"
	case p.captureMethod == "manual":
		pi.Status, pi.AmountCapturable = "requires_capture", pi.Amount
	default:
		pi.Status, pi.AmountReceived = "succeeded", pi.Amount
	}
	return pi, nil
}

// paymentMethodID is the payment_method a PaymentIntent answers with: as
// Stripe does, a test card alias (pm_card_visa) is turned into a
// PaymentMethod of its own, with its own ID, which is not the one sent;
// any other ID is answered as sent.
func paymentMethodID(sent string) string {
	if strings.HasPrefix(sent, "pm_card_") {
		return newID("pm_1")
	}
	return sent
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// intentStore keeps every PaymentIntent and every refund.
type intentStore struct {
	mu      sync.Mutex
	byID    map[string]*PaymentIntent
	refunds map[string]*Refund // by ID
	order   []string           // refund IDs, oldest first
}

func newIntentStore() *intentStore {
	return &intentStore{byID: map[string]*PaymentIntent{}, refunds: map[string]*Refund{}}
}

// put replaces a stored PaymentIntent with pi (captured, canceled).
func (st *intentStore) put(pi PaymentIntent) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := pi.clone()
	st.byID[pi.ID] = &c
}

// byCharge returns the account's PaymentIntent whose latest charge is ch.
func (st *intentStore) byCharge(account, ch string) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, pi := range st.byID {
		if pi.account == account && pi.LatestCharge != nil && *pi.LatestCharge == ch {
			return id, true
		}
	}
	return "", false
}

// add stores pi and, if it charged, records it in the ledger.
func (st *intentStore) add(pi *PaymentIntent, now time.Time, ledger *fakes.Ledger) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.byID[pi.ID] = pi
	if pi.charged() {
		ledger.Add(pi.ledgerEntry(now))
	}
}

func (st *intentStore) get(id string) (*PaymentIntent, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	pi, ok := st.byID[id]
	if !ok {
		return nil, false
	}
	c := pi.clone()
	return &c, true
}

func (st *intentStore) complete(id string, succeed bool, now time.Time, ledger *fakes.Ledger) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	pi, ok := st.byID[id]
	if !ok || (pi.Status != "requires_action" && pi.Status != "processing") {
		return false
	}
	pi.NextAction = nil
	if !succeed {
		pi.Status = "requires_payment_method"
		pi.LastPaymentError = &apiError{Type: faults.TypeCard, Code: "payment_intent_authentication_failure",
			Message: "The provided payment method has failed authentication."}
		return true
	}
	pi.Status, pi.AmountReceived = "succeeded", pi.Amount
	if pi.CaptureMethod == "manual" {
		pi.AmountReceived, pi.AmountCapturable = 0, pi.Amount
		pi.Status = "requires_capture"
	}
	ledger.Add(pi.ledgerEntry(now))
	return true
}

// search returns the account's intents whose metadata[key] is value and
// that search can see at now, oldest first.
func (st *intentStore) search(account, key, value string, visibleBefore time.Time) []PaymentIntent {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []PaymentIntent
	for _, pi := range st.byID {
		if pi.account == account && pi.Metadata[key] == value && !pi.at.After(visibleBefore) {
			out = append(out, pi.clone())
		}
	}
	slices.SortFunc(out, func(a, b PaymentIntent) int { return a.at.Compare(b.at) })
	return out
}
