package idempay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// OpType names an operation on a charged intent.
type OpType string

// The operations beyond the first charge.
const (
	// OpRefund gives money back, in part or in full, from a succeeded
	// charge (or from what was captured of an authorisation).
	OpRefund OpType = "refund"
	// OpCapture moves the money of an authorisation (a charge made with
	// manual capture), in part or in full.
	OpCapture OpType = "capture"
	// OpCancel voids an authorisation that was not captured: the hold on
	// the customer's money is released.
	OpCancel OpType = "cancel"
)

// maxReasonLength bounds RefundRequest.Reason and CancelRequest.Reason.
const maxReasonLength = 500

// RefundRequest is one refund to make exactly once.
//
// RefundID names the refund as IntentID names a charge: the caller
// persists it before refunding (a row in its refunds table, say), and every
// retry, restart or other instance that refunds with the same RefundID is
// the same refund: it is sent with one key and never refunded twice, also
// after the store's retention deleted its record (the intent's ledger
// remembers it). Every field but Key takes part in the fingerprint: a
// RefundID used again with other parameters answers the first refund's
// result once it is settled, and is refused while it is not; used for
// another intent, it is refused with ErrOpOfOtherIntent.
type RefundRequest struct {
	// RefundID is the caller's ID of this refund. Required; at most 255
	// characters, no control characters or surrounding white space.
	RefundID string
	// IntentID is the charged intent to refund. Required, as in
	// ChargeRequest.
	IntentID string
	// Amount to refund in the currency's minor units; positive. The sum of
	// an intent's refunds, those pending or unknown included, never exceeds
	// what was charged (or captured).
	Amount int64
	// Currency is the charge's ISO 4217 code, any case.
	Currency string
	// Reason is an optional note for the provider (adapters map it to
	// their own vocabulary, or drop it). At most 500 bytes, printable.
	Reason string
	// Metadata is attached to the provider's refund, where it keeps any.
	Metadata map[string]string
	// Key, if set, is the idempotency key instead of a generated one. It
	// belongs to this refund alone, as ChargeRequest.Key to its intent: a
	// key another charge or operation was made with is refused (a
	// *ValidationError on Key, outcome failed, nothing sent).
	Key string
}

// CaptureRequest is one capture of an authorisation (a charge made with
// manual capture), made exactly once. CaptureID plays RefundID's part.
type CaptureRequest struct {
	CaptureID string // the caller's ID of this capture; required
	IntentID  string // the authorised intent; required
	// Amount to capture in minor units; zero captures the whole
	// authorisation. A partial capture releases the rest, as providers do.
	Amount   int64
	Currency string            // the charge's currency; required
	Metadata map[string]string // attached to the provider's capture, where it keeps any
	Key      string            // the idempotency key instead of a generated one, if set
}

// CancelRequest voids an authorisation that was not captured, exactly
// once. CancelID plays RefundID's part.
type CancelRequest struct {
	CancelID string            // the caller's ID of this cancel; required
	IntentID string            // the authorised intent; required
	Reason   string            // optional, as RefundRequest.Reason
	Metadata map[string]string // attached to the provider's cancel, where it keeps any
	Key      string            // the idempotency key instead of a generated one, if set
}

// Validate checks r the way Client.Refund does before anything is stored
// or sent, and returns a *ValidationError for the first fault.
func (r RefundRequest) Validate() error {
	return validateOp(r.op(), r.Key, true)
}

// Validate checks r the way Client.Capture does, and returns a
// *ValidationError for the first fault.
func (r CaptureRequest) Validate() error {
	return validateOp(r.op(), r.Key, r.Amount != 0)
}

// Validate checks r the way Client.Cancel does, and returns a
// *ValidationError for the first fault.
func (r CancelRequest) Validate() error {
	return validateOp(r.op(), r.Key, false)
}

func (r RefundRequest) op() OpRequest {
	return OpRequest{Type: OpRefund, ID: r.RefundID, IntentID: r.IntentID, Amount: r.Amount,
		Currency: r.Currency, Reason: r.Reason, Metadata: r.Metadata}
}

func (r CaptureRequest) op() OpRequest {
	return OpRequest{Type: OpCapture, ID: r.CaptureID, IntentID: r.IntentID, Amount: r.Amount,
		Currency: r.Currency, Metadata: r.Metadata}
}

func (r CancelRequest) op() OpRequest {
	return OpRequest{Type: OpCancel, ID: r.CancelID, IntentID: r.IntentID, Reason: r.Reason, Metadata: r.Metadata}
}

// validateOp checks every field of an operation; money says whether it
// carries an amount (a cancel does not; a capture may not).
func validateOp(op OpRequest, key string, money bool) error {
	idField := map[OpType]string{OpRefund: "RefundID", OpCapture: "CaptureID", OpCancel: "CancelID"}[op.Type]
	checks := []func() error{
		func() error { return validateID(idField, op.ID) },
		func() error { return validateID("IntentID", op.IntentID) },
		func() error { return validateOpMoney(op, money) },
		func() error { return validateReason(op.Reason) },
		func() error { return validateMap("Metadata", op.Metadata, true) },
		func() error { return (ChargeRequest{Key: key}).validateKey() },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateID checks an ID the caller persists: the rules of an intent ID.
func validateID(field, id string) error {
	if err := checkText(field, id, maxIntentIDLength); err != nil {
		return err
	}
	if strings.TrimSpace(id) != id {
		return invalid(field, "has leading or trailing white space")
	}
	return nil
}

func validateOpMoney(op OpRequest, money bool) error {
	switch {
	case op.Type == OpCancel:
		return nil
	case op.Amount < 0 || (money && op.Amount == 0):
		return invalid("Amount", "must be positive, got %d", op.Amount)
	case op.Amount > MaxAmount:
		return invalid("Amount", "%d exceeds the largest exact amount %d", op.Amount, int64(MaxAmount))
	}
	_, err := CurrencyExponent(op.Currency)
	return err
}

func validateReason(s string) error {
	if s == "" {
		return nil
	}
	return checkText("Reason", s, maxReasonLength)
}

// opFingerprint hashes what makes two calls the same operation.
func opFingerprint(namespace string, op OpRequest) string {
	canon := struct {
		NS                        string
		Type                      OpType
		ID, Intent, Currency, Why string
		Amount                    int64
		Meta                      map[string]string
	}{namespace, op.Type, op.ID, op.IntentID, strings.ToUpper(op.Currency), op.Reason, op.Amount, nonEmpty(op.Metadata)}
	b, _ := json.Marshal(canon) // cannot fail: strings, ints and a string map
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
