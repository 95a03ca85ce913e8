package idempay

import (
	"errors"
	"fmt"
)

// Errors of refunds, captures and cancels, and of charges made with manual
// capture, for errors.Is. The refusals (every one but ErrAuthorized) come
// in an *OpError whose Outcome is failed: the Client refused before the
// operation's first byte, under the intent's ledger, so nothing was sent
// under its key; the same call may succeed once what it depends on has
// changed (an unknown refund settled as failed frees its amount), and is
// then a new attempt.
var (
	// ErrNotSupported: the Config's Provider has no Refunder, Capturer or
	// Canceller for the operation. Returned before anything is stored.
	ErrNotSupported = errors.New("idempay: operation not supported by the provider")

	// ErrChargeNotSucceeded: the intent has no settled successful charge
	// in the store (never charged, failed, pending or unknown), so there is
	// nothing to refund, capture or cancel yet. Returned before anything is
	// stored. A charge that succeeded is in its intent's ledger from its
	// success on, for good, whatever the store's retention deletes; only
	// an intent charged before ledgers kept charges, whose record has
	// since been deleted, is told this wrongly.
	ErrChargeNotSucceeded = errors.New("idempay: the intent's charge has not succeeded")

	// ErrNotRefundable: the intent was charged, but nothing can be refunded
	// now: it is an authorisation that was not captured (cancel it
	// instead), whose capture is not settled, or that was cancelled.
	ErrNotRefundable = errors.New("idempay: nothing refundable")

	// ErrRefundExceeds: the refund's amount is more than is left to refund
	// once every refund of the intent is counted, those pending or unknown
	// included (they may still move money). An *AmountError says how much
	// is left.
	ErrRefundExceeds = errors.New("idempay: refund exceeds what is left to refund")

	// ErrCaptureExceeds: the capture's amount is more than was authorised.
	// An *AmountError says how much was.
	ErrCaptureExceeds = errors.New("idempay: capture exceeds the authorisation")

	// ErrNotAuthorization: a capture or cancel of a charge that is not an
	// authorisation awaiting capture (it was captured when it was made).
	// Returned before anything is stored.
	ErrNotAuthorization = errors.New("idempay: the charge is not an authorisation")

	// ErrAuthorizationClosed: a capture or cancel of an authorisation that
	// another capture or cancel has settled, or may still settle (it is
	// pending or unknown: settle it first).
	ErrAuthorizationClosed = errors.New("idempay: the authorisation is captured or cancelled")

	// ErrAuthorized: Charge's answer for a charge made with manual capture
	// and not captured yet: the provider holds the amount on the
	// customer's card, but no money has moved to the merchant, and none
	// will unless Capture is called. It comes in a *ChargeError with
	// outcome pending (it matches ErrPending too), with the *Charge
	// (Authorized set), so that a caller switching on OutcomeOf never ships
	// an uncaptured order as paid. A merchant whose model is
	// authorise-then-ship ships on errors.Is(err, ErrAuthorized) and
	// captures when it ships.
	ErrAuthorized = errors.New("idempay: authorised, not captured")

	// ErrOpOfOtherIntent: the operation ID (RefundID, CaptureID,
	// CancelID) names an operation of another intent. An operation ID
	// names one operation of one intent for as long as the store keeps it;
	// this call was refused before anything was sent for its intent.
	ErrOpOfOtherIntent = errors.New("idempay: the operation ID is another intent's")

	// ErrCanceled: Charge's answer for an authorisation that was cancelled:
	// the hold was released and no money moved. Outcome failed; the intent
	// is closed for good (a new order needs a new intent ID).
	ErrCanceled = errors.New("idempay: authorisation cancelled")
)

// AmountError is a refund or capture refused for its amount before
// anything was sent. It matches ErrRefundExceeds or ErrCaptureExceeds.
type AmountError struct {
	Type      OpType // refund or capture
	IntentID  string // the intent refunded or captured
	Requested int64  // the operation's amount
	Available int64  // what was left: refundable, counting refunds pending and unknown; or authorised
	Currency  string // the charge's
}

// Error names the amounts.
func (e *AmountError) Error() string {
	return fmt.Sprintf("idempay: %s of %d %s on intent %q: only %d available", e.Type, e.Requested, e.Currency,
		e.IntentID, e.Available)
}

// Unwrap returns ErrRefundExceeds or ErrCaptureExceeds.
func (e *AmountError) Unwrap() error {
	if e.Type == OpCapture {
		return ErrCaptureExceeds
	}
	return ErrRefundExceeds
}
