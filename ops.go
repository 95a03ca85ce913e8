package idempay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// Refund refunds req.Amount of a charged intent exactly once, with the
// discipline of Charge: req.RefundID gets one key, durable in the store
// before the first byte, resent by every retry, restart and instance until
// the refund's outcome is known; identical concurrent calls share one
// flight, which outlives an impatient caller; a panic ends it unknown.
// OutcomeOf(err) says what happened, and a caller who switches on it alone
// is right:
//
//   - nil error: succeeded. The *Operation is the provider's refund.
//   - OutcomePending: the provider accepted the refund and has not finished
//     it. Its amount counts as refunded until it settles; call Refund again
//     (same request) later to learn how it ended.
//   - OutcomeFailed: no money moved: refused by the provider, or refused
//     here before anything was sent (ErrRefundExceeds, ErrNotRefundable,
//     ErrChargeNotSucceeded, ErrNotSupported, ErrOpOfOtherIntent, a
//     *ValidationError).
//   - OutcomeUnknown: money may have moved. Call Refund again with the same
//     request to resume with the same key (or settle by lookup); never
//     refund it under another RefundID.
//
// Before the first byte, the refund is entered in the intent's ledger
// under the ledger's lease, and refused if the intent's refunds, those
// pending or unknown included, would come to more than was charged (or
// captured): however many goroutines and instances refund one intent, and
// wherever a process crashes, the refunds never exceed the charge. The
// ledger outlives the records the store's retention deletes: a refund
// weeks after the charge is checked against it, and the same RefundID
// asked again after its record was deleted answers the refund made (its
// success replayed), never refunding again. A RefundID names one refund
// of one intent: used for another intent it is refused
// (ErrOpOfOtherIntent, outcome failed); so is a Key another charge or
// operation was made with.
func (c *Client) Refund(ctx context.Context, req RefundRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// Capture captures an authorisation (a charge made with manual capture)
// exactly once, as Refund refunds: in part (Amount at most what was
// authorised; the provider releases the rest) or in whole (Amount zero).
// At most one capture or cancel of an authorisation is let through: while
// one may still move money, another is refused with ErrAuthorizationClosed.
// A charge captured when it was made is refused with ErrNotAuthorization.
// Its outcomes read as Refund's; once it succeeds, Charge of the intent
// answers succeeded.
func (c *Client) Capture(ctx context.Context, req CaptureRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// Cancel voids an authorisation that was not captured, exactly once, as
// Refund refunds. Once it succeeds, Charge of the intent answers failed
// with ErrCanceled. Its outcomes read as Refund's.
func (c *Client) Cancel(ctx context.Context, req CancelRequest) (*Operation, error) {
	return c.operate(ctx, req.op(), req.Key, req.Validate)
}

// operate runs one refund, capture or cancel through the engine.
func (c *Client) operate(ctx context.Context, op OpRequest, key string, validate func() error) (*Operation, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	mop, err := c.moneyOp(op, key, OutcomeFailed)
	if err != nil {
		return nil, err
	}
	if err := validate(); err != nil {
		return nil, err
	}
	if err := mop.operator.ValidateOp(mop.req); err != nil {
		return nil, refusedByAdapter(op, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: OutcomeUnknown,
			Err: fmt.Errorf("idempay: not sent, %s not looked up: %w", op.Type, err)}
	}
	ch, err := c.flights.do(ctx, c, mop)
	return opAnswer(op.Type, op.IntentID, ch, err)
}

// moneyOp is the engine's operation for op, or, when the provider makes
// no operation of op's type, the caller's ErrNotSupported with the given
// outcome (nothing is stored).
func (c *Client) moneyOp(op OpRequest, key string, unsupported Outcome) (*moneyOp, error) {
	o, ok := c.provider.(Operator)
	var makes, finds bool
	if ok {
		makes, finds = o.Operates(op.Type)
	}
	if !makes {
		return nil, &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: unsupported,
			Err: fmt.Errorf("%w: %s has no %s", ErrNotSupported, c.provider.Name(), op.Type)}
	}
	op.Currency = strings.ToUpper(op.Currency)
	return &moneyOp{c: c, operator: o, finds: finds, req: op, fp: opFingerprint(c.opNamespace(op.Type), op), key: key}, nil
}

// refusedByAdapter is the caller's error for what the adapter's ValidateOp
// refused: nothing was stored or sent, so the outcome is failed. A
// *ValidationError is returned as it is, as the Client's own are.
func refusedByAdapter(op OpRequest, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return err
	}
	return &OpError{Type: op.Type, OpID: op.ID, IntentID: op.IntentID, Outcome: OutcomeFailed, Err: err}
}

// SettleRefund finds out how an unsettled refund ended without resending
// it, by asking a provider that can look refunds up (Operator.FindOp), and
// records what it learns: for a refund stuck on a stored failure, or one a
// webhook says has completed. req is the refund's original request. A
// refund whose record the store's retention deleted answers from the
// intent's ledger (asking the provider if the ledger does not know). It
// takes the refund's lease only when it is free, so it may run while the
// refund is on the wire (as Settle does for a charge). A settled refund
// answers from the store. Its return values read like Refund's.
func (c *Client) SettleRefund(ctx context.Context, req RefundRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// SettleCapture settles an unsettled capture by lookup, as SettleRefund
// settles a refund.
func (c *Client) SettleCapture(ctx context.Context, req CaptureRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// SettleCancel settles an unsettled cancel by lookup, as SettleRefund
// settles a refund.
func (c *Client) SettleCancel(ctx context.Context, req CancelRequest) (*Operation, error) {
	return c.settleOp(ctx, req.op(), req.Key)
}

// settleOp runs the lookup of one operation through the engine's settle.
func (c *Client) settleOp(ctx context.Context, op OpRequest, key string) (*Operation, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	mop, err := c.moneyOp(op, key, OutcomeUnknown)
	if err != nil {
		return nil, err
	}
	if err := mop.prepare(ctx); err != nil {
		return opAnswer(op.Type, op.IntentID, nil, err)
	}
	if ch, err, ok := c.settleForgotten(ctx, mop); ok {
		return opAnswer(op.Type, op.IntentID, ch, err)
	}
	ch, err := c.flights.settle(ctx, c, mop)
	return opAnswer(op.Type, op.IntentID, ch, err)
}

// Ledger returns what the store knows of an intent's money: charged,
// captured, refunded, what is left to refund, and each refund, capture and
// cancel with its state, as their own records say while they exist and the
// ledger keeps it after. It reads the store only;
// it takes no lease and never asks the provider. An intent whose charge is
// not a settled success has no ledger: the error matches
// ErrChargeNotSucceeded.
func (c *Client) Ledger(ctx context.Context, intentID string) (*Ledger, error) {
	if ctx == nil {
		return nil, invalid("ctx", "is a nil context.Context")
	}
	doc, err := c.readLedger(ctx, intentID, ledgerRead{snapshot: true, reconciled: true})
	var r *refusal
	if errors.As(err, &r) {
		return nil, r.err
	}
	if err != nil {
		return nil, err
	}
	return doc.summary(intentID), nil
}

// UnresolvedOps yields, as Unresolved does for charges, every operation of
// type t whose outcome is not known (open or pending); each Record's
// ID is the operation's ID. After a restart, call each again with its
// original request to resume it.
func (c *Client) UnresolvedOps(ctx context.Context, t OpType) iter.Seq2[Record, error] {
	return c.unresolved(ctx, c.opNamespace(t))
}

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

// Operation is the result of a refund, capture or cancel that succeeded or
// is pending at the provider. Adapters return it in Verdict.Operation with
// ID, Status, State, Amount and Currency; the Client fills the rest.
type Operation struct {
	Type      OpType `json:"type"`       // refund, capture or cancel
	OpID      string `json:"op_id"`      // the caller's operation ID (RefundID, ...)
	IntentID  string `json:"intent_id"`  // the intent acted on
	Key       string `json:"key"`        // the idempotency key sent
	ID        string `json:"id"`         // the provider's ID: the refund's; for a capture or cancel, what the provider answered (the charge's)
	Status    string `json:"status"`     // the provider's own status word
	State     State  `json:"state"`      // StateSucceeded or StatePending
	Amount    int64  `json:"amount"`     // minor units
	Currency  string `json:"currency"`   // upper-case ISO 4217
	RequestID string `json:"request_id"` // the provider's request ID, if sent

	// Replayed, ReplayedFrom, Requests, Attempt and ParamsDiffer mean what
	// they mean on a Charge.
	Replayed     bool         `json:"replayed"`
	ReplayedFrom ReplaySource `json:"replayed_from,omitempty"`
	Requests     int          `json:"attempts"`
	Attempt      int          `json:"attempt"`
	ParamsDiffer bool         `json:"params_differ,omitempty"`

	// Raw is the provider's response body, without secrets.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// receiptOf is the engine's receipt for an adapter's operation.
func receiptOf(o *Operation) *Charge {
	return &Charge{ID: o.ID, Status: o.Status, State: o.State, Amount: o.Amount, Currency: o.Currency,
		RequestID: o.RequestID, Raw: o.Raw}
}

// operationOf is the caller's Operation for the engine's receipt of an
// operation of type t on intentID; the receipt's IntentID is the record's
// ID, the operation's own.
func operationOf(t OpType, intentID string, ch *Charge) *Operation {
	return &Operation{Type: t, OpID: ch.IntentID, IntentID: intentID, Key: ch.Key, ID: ch.ID,
		Status: ch.Status, State: ch.State, Amount: ch.Amount, Currency: ch.Currency, RequestID: ch.RequestID,
		Replayed: ch.Replayed, ReplayedFrom: ch.ReplayedFrom, Requests: ch.Requests, Attempt: ch.Attempt,
		ParamsDiffer: ch.ParamsDiffer, Raw: ch.Raw}
}

// OpError is the error of Client.Refund, Capture and Cancel for every
// outcome but success, except bad input refused before anything was looked
// up (a bare *ValidationError, outcome failed). It reads as ChargeError
// does; OutcomeOf gives its Outcome.
type OpError struct {
	Type     OpType  // refund, capture or cancel
	OpID     string  // the caller's operation ID
	IntentID string  // the intent acted on
	Key      string  // the operation's key, once reserved
	Outcome  Outcome // what is known about the money
	Requests int     // requests that left this process for this call
	Err      error   // the cause: a sentinel, an *AmountError, an *APIError, a transport error
}

// Error names the operation, its intent, the outcome, the attempts and
// the cause.
func (e *OpError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "idempay: %s %q of intent %q: outcome %s", e.Type, e.OpID, e.IntentID, e.Outcome)
	if e.Requests > 0 {
		fmt.Fprintf(&b, " after %d request(s)", e.Requests)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause and, as ChargeError does, ErrOutcomeUnknown or
// ErrPending for those outcomes.
func (e *OpError) Unwrap() []error {
	return (&ChargeError{Outcome: e.Outcome, Err: e.Err}).Unwrap()
}

// opAnswer turns the engine's answer for an operation into the caller's.
func opAnswer(t OpType, intentID string, ch *Charge, err error) (*Operation, error) {
	var op *Operation
	if ch != nil {
		op = operationOf(t, intentID, ch)
	}
	return op, opError(t, intentID, err)
}

// opError turns the engine's *ChargeError for an operation into an
// *OpError; any other error is returned as it is.
func opError(t OpType, intentID string, err error) error {
	ce, ok := err.(*ChargeError)
	if !ok {
		return err
	}
	return &OpError{Type: t, OpID: ce.IntentID, IntentID: intentID, Key: ce.Key, Outcome: ce.Outcome,
		Requests: ce.Requests, Err: ce.Err}
}

// Errors of refunds, captures and cancels, and of charges made with manual
// capture, for errors.Is. The refusals (every one but ErrAuthorized) come
// in an *OpError whose Outcome is failed: the Client refused before the
// operation's first byte, under the intent's ledger, so nothing was sent
// under its key; the same call may succeed once what it depends on has
// changed (an unknown refund settled as failed frees its amount), and is
// then a new attempt.
var (
	// ErrNotSupported: the Config's Provider is no Operator, does not make
	// operations of the type (Operator.Operates), or is not set up for it
	// (its ValidateOp says so). Returned before anything is stored.
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
