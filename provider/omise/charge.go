package omise

import (
	"encoding/json"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/wire"
)

// charge is the part of Omise's charge object the adapter reads.
type charge struct {
	Object         string `json:"object"`
	ID             string `json:"id"`
	Status         string `json:"status"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	Authorized     bool   `json:"authorized"`
	Capture        *bool  `json:"capture"`
	AuthorizeURI   string `json:"authorize_uri"`
	FailureCode    string `json:"failure_code"`
	FailureMessage string `json:"failure_message"`
	Paid           bool   `json:"paid"`
	Captured       bool   `json:"captured"` // the paid of older API versions
	Reversed       bool   `json:"reversed"`
	Expired        bool   `json:"expired"`
	// AuthorizedAmount and CapturedAmount are what a charge made with
	// capture false holds and what its capture moved (less with a partial
	// capture: captured_amount 50000 of 100000 in Omise's capture-post
	// fixture). Older API versions send neither.
	AuthorizedAmount int64 `json:"authorized_amount"`
	CapturedAmount   int64 `json:"captured_amount"`
	// MultiCapture is Omise's multiple partial capture: such a charge may
	// be captured more than once.
	MultiCapture bool `json:"multi_capture"`
	// Metadata is any JSON: other integrations on the same account write
	// numbers and booleans ("payment_attempt_id": 18). Only string values
	// can be idempay's tags.
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// meta returns the metadata value of key if it is a JSON string.
func (c charge) meta(key string) (string, bool) { return metaString(c.Metadata, key) }

// metaString returns m[key] if it is a JSON string: other integrations
// write numbers and booleans, which are never idempay's tags.
func metaString(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// tags returns the charge's idempay tags.
func (c charge) tags() wire.Tags {
	intent, _ := c.meta(IntentMetadataKey)
	ns, hasNS := c.meta(NamespaceMetadataKey)
	key, hasKey := c.meta(KeyMetadataKey)
	return wire.Tags{Intent: intent, Namespace: ns, HasNamespace: hasNS, Key: key, HasKey: hasKey}
}

// parseCharge reads a charge body; ok is false when the body is not one.
func parseCharge(body []byte) (c charge, ok bool) {
	if json.Unmarshal(body, &c) != nil || c.ID == "" || (c.Object != "" && c.Object != "charge") {
		return charge{}, false
	}
	return c, true
}

// StatusAuthorized is the Charge.Status reported for a charge Omise holds
// as authorised and waiting for capture (status "pending", authorized
// true, capture false), told apart from a charge waiting for 3-D Secure:
// the authorisation the key guards is done, so the charge's record is
// settled, and the Charge has Authorized set, so that Client.Charge
// answers it pending with idempay.ErrAuthorized until it is captured
// (Client.Capture) and failed with idempay.ErrCanceled once it is
// reversed (Client.Cancel).
const StatusAuthorized = "authorized"

// verdict says what a charge's status means for the money.
func (c charge) verdict(v idempay.Verdict) idempay.Verdict {
	ch := &idempay.Charge{ID: c.ID, Status: c.Status, Amount: c.Amount, Currency: strings.ToUpper(c.Currency)}
	switch c.Status {
	case "successful":
		v.Kind, ch.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "":
		// Omise's charges before the status field (API versions older than
		// the one the adapter asks for) said paid, or captured, only: that
		// is a success, anything else unknown.
		if !c.Paid && !c.Captured {
			v.Kind = idempay.KindUnknown
			return v
		}
		v.Kind, ch.State = idempay.KindSucceeded, idempay.StateSucceeded
	case "pending":
		if c.Authorized && c.Capture != nil && !*c.Capture {
			// The authorisation the key guards is done; capturing is a
			// separate call. Pending would leave the intent open until
			// someone captures; Authorized tells the Client that no money
			// has moved yet.
			v.Kind, ch.State, ch.Status = idempay.KindSucceeded, idempay.StateSucceeded, StatusAuthorized
			ch.Authorized = true
			break
		}
		// 3-D Secure or an offsite source: the customer finishes it.
		v.Kind, ch.State, ch.AuthorizeURL = idempay.KindPending, idempay.StatePending, c.AuthorizeURI
	case "failed":
		// Omise's decline: a charge, not an error, and final.
		v.Kind = idempay.KindDeclined
		v.Err = &idempay.APIError{Code: c.FailureCode, Message: c.FailureMessage}
		return v
	case "reversed", "expired":
		// The authorisation was released, or the customer never finished:
		// no money moved, and the charge cannot be completed any more.
		v.Kind = idempay.KindDeclined
		v.Err = &idempay.APIError{Code: c.Status, Message: "charge " + c.ID + " is " + c.Status}
		return v
	default:
		v.Kind = idempay.KindUnknown
		return v
	}
	v.Charge = ch
	return v
}
