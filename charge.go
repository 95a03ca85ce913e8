package idempay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MaxAmount is the largest amount, in minor units, that idempay sends:
// 2^53-1, the largest integer every JSON implementation reads exactly.
// Providers' own limits are lower and are checked by their adapters.
const MaxAmount = 1<<53 - 1

// MaxKeyLength is the longest idempotency key accepted (Stripe's limit).
const MaxKeyLength = 255

// ChargeRequest is one payment intent to charge exactly once.
//
// Two requests with the same IntentID are the same payment: the second is
// answered from the first (a replay) and never charges again. Every field
// but Key takes part in the fingerprint that detects an intent re-used with
// other parameters.
type ChargeRequest struct {
	// IntentID is the caller's order or payment-intent ID, persisted by the
	// caller before charging. Required; at most 255 characters, no control
	// characters.
	IntentID string

	// Amount in the currency's minor units: cents for USD, yen for JPY
	// (¥1,500 is 1500, JPY having no minor unit), satang for THB.
	Amount int64

	// Currency is an ISO 4217 alphabetic code, any case ("JPY", "thb").
	Currency string

	// Source is the payment token or method (a card token, a payment
	// method ID). It is a secret: it is never logged, stored or put in an
	// error, only hashed into the fingerprint.
	Source Secret

	// Customer is the provider's customer ID, if the source belongs to one.
	Customer string

	// Description is shown to the merchant in the provider's dashboard.
	Description string

	// ReturnURL is where the customer comes back after 3-D Secure or a
	// redirect method, for providers that use it.
	ReturnURL string

	// Metadata is attached to the provider's charge. Adapters add the
	// intent ID to it so a charge can be found by intent.
	Metadata map[string]string

	// Extra holds provider-specific parameters an adapter documents (for
	// example Stripe's "capture_method"). They take part in the fingerprint.
	Extra map[string]string

	// Key, if set, is used as the idempotency key instead of a generated
	// one, to pass through a key chosen by a frontend. At most 255
	// printable ASCII characters. It names one attempt for good: after that
	// attempt failed, a request with the same Key is refused (a
	// *ValidationError on Key) and a new attempt needs a new key. It
	// belongs to the first intent (or refund, capture, cancel) made with it
	// in this account, for the store's life: another intent charged with it
	// is refused the same way, outcome failed, nothing sent, and stays
	// chargeable under another key.
	Key string

	// BaseKey, instead of Key, names one user action across its attempts:
	// the frontend's Idempotency-Key that a guarded BFF handler passes on
	// (guard.KeyFrom). Attempt 1 is sent under BaseKey itself, attempt n
	// under AttemptKey(BaseKey, n): so when an attempt failed for good
	// with nothing charged (ErrUnreachable: nothing reached the provider),
	// the frontend's retry of the same action, with the same key, begins
	// the next attempt under a key of its own instead of being refused.
	// A decline is never retried by it: the same parameters are answered
	// the stored decline. Rules as for Key; at most one of the two is set.
	BaseKey string
}

// LogValue keeps the Source out of logs.
func (r ChargeRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("intent", r.IntentID), slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency))
}

// Charge is the result of a charge that succeeded or is pending at the
// provider.
type Charge struct {
	IntentID  string `json:"intent_id"`
	Key       string `json:"key"`        // the idempotency key sent
	ID        string `json:"id"`         // the provider's charge ID
	Status    string `json:"status"`     // the provider's own status word
	State     State  `json:"state"`      // StateSucceeded or StatePending (an authorisation not captured is pending)
	Amount    int64  `json:"amount"`     // minor units, as the provider reported
	Currency  string `json:"currency"`   // upper-case ISO 4217
	RequestID string `json:"request_id"` // the provider's request ID, if sent
	// AuthorizeURL is where to send the customer for a pending charge
	// (3-D Secure), if the provider gave one.
	AuthorizeURL string `json:"authorize_url,omitempty"`
	// Authorized is set by the adapter for a charge made with manual
	// capture: the provider holds Amount on the customer's card and moves
	// it only when it is captured (Client.Capture). Until then Charge
	// answers it with State StatePending and ErrAuthorized, outcome
	// pending; once captured, State StateSucceeded and no error. See the
	// package doc.
	Authorized bool `json:"authorized,omitempty"`
	// Captured is, for an authorisation, what its settled capture moved,
	// as the store knows it (zero until then). Filled by the Client.
	Captured int64 `json:"captured,omitempty"`

	// Replayed is true when this result was not produced by a fresh
	// execution during this call; ReplayedFrom says where it came from.
	Replayed     bool         `json:"replayed"`
	ReplayedFrom ReplaySource `json:"replayed_from,omitempty"`

	// Requests counts the HTTP requests this call sent (0 for a store
	// replay). Stored under its former name, "attempts", which records
	// written before the rename hold.
	Requests int `json:"attempts"`
	// Attempt is the intent's attempt this charge belongs to: 1, or more
	// after earlier attempts definitely failed (a declined card, then
	// another).
	Attempt int `json:"attempt"`
	// ParamsDiffer is set when the intent had already succeeded and this
	// call brought other parameters: the answer is that earlier success,
	// from the store, and nothing was charged for this call's parameters.
	ParamsDiffer bool `json:"params_differ,omitempty"`

	// Raw is the provider's response body, without the secrets it may
	// echo (the Source, the credentials, client secrets).
	Raw json.RawMessage `json:"raw,omitempty"`
}

// ReplaySource says where a replayed result came from.
type ReplaySource string

const (
	// ReplayFromServer: the provider answered with its replay header.
	ReplayFromServer ReplaySource = "server"
	// ReplayFromStore: the intent was already settled in the KeyStore; no
	// request was sent.
	ReplayFromStore ReplaySource = "store"
	// ReplayFromLookup: the charge was found by looking it up at the
	// provider instead of resending.
	ReplayFromLookup ReplaySource = "lookup"
)

// Secret is a string that must never be printed: API keys and payment
// tokens. Every fmt verb, slog and encoding/json see "[redacted]".
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret itself, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// String hides the secret.
func (s Secret) String() string { return redacted }

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return redacted }

// Format hides the secret from every fmt verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON hides the secret from encoding/json.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// fingerprint hashes what makes two requests the same payment. The JSON
// encoding of a struct with sorted maps is canonical, so equal requests
// always hash alike. Stored records carry it, so its bytes never change:
// the common request (every string plain ASCII) is written here without
// reflection, byte for byte as encoding/json writes it (fingerprint_test
// holds the two together); any other goes through encoding/json itself.
func fingerprint(namespace string, r ChargeRequest) string {
	var stack [512]byte
	b, ok := appendCanonical(stack[:0], namespace, r)
	if !ok {
		b = canonicalJSON(namespace, r)
	}
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]) // one allocation; hex.EncodeToString makes two
}

// canonicalJSON is the fingerprint's document, by encoding/json.
func canonicalJSON(namespace string, r ChargeRequest) []byte {
	canon := struct {
		NS, Intent, Currency, Customer, Desc, Return string
		Amount                                       int64
		Source                                       string
		Meta, Extra                                  map[string]string
	}{namespace, r.IntentID, strings.ToUpper(r.Currency), r.Customer, r.Description, r.ReturnURL,
		r.Amount, r.Source.Reveal(), nonEmpty(r.Metadata), nonEmpty(r.Extra)}
	b, _ := json.Marshal(canon) // cannot fail: strings, ints and string maps only
	return b
}

// appendCanonical appends canonicalJSON's bytes to b without reflection;
// ok is false when a string needs escaping, and then b is garbage.
func appendCanonical(b []byte, namespace string, r ChargeRequest) ([]byte, bool) {
	ok := true
	str := func(name, v string) {
		ok = ok && !needsJSONEscape(v)
		b = append(append(append(append(b, name...), `":"`...), v...), '"')
	}
	str(`{"NS`, namespace)
	str(`,"Intent`, r.IntentID)
	str(`,"Currency`, strings.ToUpper(r.Currency))
	str(`,"Customer`, r.Customer)
	str(`,"Desc`, r.Description)
	str(`,"Return`, r.ReturnURL)
	b = strconv.AppendInt(append(b, `,"Amount":`...), r.Amount, 10)
	str(`,"Source`, r.Source.Reveal())
	b = append(b, `,"Meta":`...)
	b, ok = appendStringMap(b, r.Metadata, ok)
	b = append(b, `,"Extra":`...)
	b, ok = appendStringMap(b, r.Extra, ok)
	return append(b, '}'), ok
}

// appendStringMap writes m as encoding/json does, keys sorted, an empty
// map as null (nonEmpty).
func appendStringMap(b []byte, m map[string]string, ok bool) ([]byte, bool) {
	if len(m) == 0 {
		return append(b, "null"...), ok
	}
	keys := slices.Sorted(maps.Keys(m))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		ok = ok && !needsJSONEscape(k) && !needsJSONEscape(m[k])
		b = append(append(append(append(append(b, '"'), k...), `":"`...), m[k]...), '"')
	}
	return append(b, '}'), ok
}

// nonEmpty makes an empty map and a nil one the same payment.
func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
