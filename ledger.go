package idempay

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Ledger is what the store knows of an intent's money after its charge:
// what was charged or authorised, captured and refunded, and every refund,
// capture and cancel made of it, with the state of each. Client.Ledger
// returns it; it is a snapshot, true of the store when it was read.
type Ledger struct {
	IntentID   string // the charged intent
	ChargeID   string // the provider's ID of the charge
	Currency   string // the charge's, upper-case ISO 4217
	Amount     int64  // charged; for an authorisation, authorised
	Authorized bool   // the charge was made with manual capture
	Captured   int64  // moved to the merchant: Amount unless Authorized, else the settled capture's amount
	Canceled   bool   // the authorisation was voided
	Refunded   int64  // refunds that succeeded
	// RefundsInFlight is the sum of the refunds pending or unknown: they
	// may still move money, so they count against Refundable until they
	// settle.
	RefundsInFlight int64
	// Refundable is what a new refund may still take: Captured less
	// Refunded and RefundsInFlight.
	Refundable int64
	Ops        []LedgerOp // oldest first
}

// LedgerOp is one refund, capture or cancel of an intent, as its own
// record in the store says.
type LedgerOp struct {
	Type    OpType // refund, capture or cancel
	OpID    string // the caller's operation ID
	Attempt int    // the operation's attempt this entry stands for
	Key     string // its key
	Amount  int64  // refunded or captured (authorised, for a cancel), in minor units
	State   State  // open: the outcome is unknown; pending; succeeded; failed (it moved no money)
}

// Outcome is what the entry's state means for the money.
func (o LedgerOp) Outcome() Outcome {
	switch o.State {
	case StateSucceeded:
		return OutcomeSucceeded
	case StateFailed:
		return OutcomeFailed
	case StatePending:
		return OutcomePending
	}
	return OutcomeUnknown
}

// ledgerDoc is the ledger record's Result: the charge, as it was when the
// first operation was reserved (a settled charge never changes), and one
// entry per attempt of an operation, written before that attempt's first
// byte.
type ledgerDoc struct {
	Charge *ledgerCharge `json:"charge,omitempty"`
	Ops    []LedgerOp    `json:"ops,omitempty"`
}

// ledgerCharge is what the operations need of the intent's charge.
type ledgerCharge struct {
	Ref        string `json:"ref"`
	Attempt    int    `json:"attempt,omitempty"` // the attempt that succeeded; 0 in ledgers written before attempts
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Authorized bool   `json:"authorized,omitempty"`
}

func decodeLedger(raw []byte) (ledgerDoc, error) {
	var d ledgerDoc
	if len(raw) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("%w: ledger unreadable: %w", ErrStore, err)
	}
	return d, nil
}

func (d ledgerDoc) encode() []byte {
	b, _ := json.Marshal(d) // strings, numbers and bools only
	return b
}

// has reports whether the attempt (op's type and ID, attempt, key) is
// entered already: reserved by an earlier call, which may have sent it.
func (d ledgerDoc) has(t OpType, id string, attempt int, key string) bool {
	for _, e := range d.Ops {
		if e.Type == t && e.OpID == id && e.Attempt == attempt && e.Key == key {
			return true
		}
	}
	return false
}

// sum adds up the amounts of the entries of type t whose state passes keep.
func (d ledgerDoc) sum(t OpType, keep func(State) bool) int64 {
	var n int64
	for _, e := range d.Ops {
		if e.Type == t && keep(e.State) {
			n += e.Amount
		}
	}
	return n
}

// first is the first entry of type t whose state passes keep, if any.
func (d ledgerDoc) first(t OpType, keep func(State) bool) (LedgerOp, bool) {
	for _, e := range d.Ops {
		if e.Type == t && keep(e.State) {
			return e, true
		}
	}
	return LedgerOp{}, false
}

// live: the entry may have moved money, or still may. Only a failed one
// (proved to have moved none) is not.
func live(s State) bool { return s != StateFailed }

func succeeded(s State) bool { return s == StateSucceeded }

func unsettled(s State) bool { return !s.Closed() }

// captured is what moved to the merchant: the charge's amount, or for an
// authorisation its settled capture's.
func (d ledgerDoc) captured() int64 {
	if !d.Charge.Authorized {
		return d.Charge.Amount
	}
	return d.sum(OpCapture, succeeded)
}

// summary is the public Ledger of the document.
func (d ledgerDoc) summary(intentID string) *Ledger {
	l := &Ledger{IntentID: intentID, ChargeID: d.Charge.Ref, Currency: d.Charge.Currency,
		Amount: d.Charge.Amount, Authorized: d.Charge.Authorized, Captured: d.captured(),
		Refunded: d.sum(OpRefund, succeeded), RefundsInFlight: d.sum(OpRefund, unsettled)}
	_, l.Canceled = d.first(OpCancel, succeeded)
	l.Refundable = max(l.Captured-l.Refunded-l.RefundsInFlight, 0)
	l.Ops = append([]LedgerOp(nil), d.Ops...)
	return l
}

// admit applies the rules of the intent's money to a new attempt of op,
// on the ledger as reconciled under its lease: every entry that may still
// move money counts. It returns the guard's error, or nil.
func (d ledgerDoc) admit(op OpRequest) error {
	if err := d.Charge.admit(op); err != nil {
		return err
	}
	switch op.Type {
	case OpRefund:
		return d.admitRefund(op)
	case OpCapture, OpCancel:
		if e, ok := d.first(OpCapture, live); ok {
			return fmt.Errorf("%w: capture %q is %s", ErrAuthorizationClosed, e.OpID, e.State)
		}
		if e, ok := d.first(OpCancel, live); ok {
			return fmt.Errorf("%w: cancel %q is %s", ErrAuthorizationClosed, e.OpID, e.State)
		}
	}
	return nil
}

func (d ledgerDoc) admitRefund(op OpRequest) error {
	if d.Charge.Authorized {
		if e, ok := d.first(OpCancel, live); ok {
			return fmt.Errorf("%w: the authorisation's cancel %q is %s", ErrNotRefundable, e.OpID, e.State)
		}
		if e, ok := d.first(OpCapture, unsettled); ok {
			return fmt.Errorf("%w: the authorisation's capture %q is %s; settle it first", ErrNotRefundable, e.OpID, e.State)
		}
		if d.captured() == 0 {
			return fmt.Errorf("%w: an authorisation that was not captured; cancel it instead", ErrNotRefundable)
		}
	}
	left := d.captured() - d.sum(OpRefund, live)
	if op.Amount > left {
		return &AmountError{Type: OpRefund, IntentID: op.IntentID, Requested: op.Amount, Available: max(left, 0),
			Currency: d.Charge.Currency}
	}
	return nil
}

// admit applies the rules that depend on the charge alone, which never
// changes once settled: they hold, or fail, for every attempt of op, so
// they are checked before anything is stored, and again under the lease.
func (ch ledgerCharge) admit(op OpRequest) error {
	switch {
	case op.Type != OpCancel && !strings.EqualFold(op.Currency, ch.Currency):
		return invalid("Currency", "is %s; the charge of intent %q is in %s", op.Currency, op.IntentID, ch.Currency)
	case op.Type != OpRefund && !ch.Authorized:
		return fmt.Errorf("%w: intent %q was captured when it was charged", ErrNotAuthorization, op.IntentID)
	case op.Type == OpCapture && op.Amount > ch.Amount:
		return &AmountError{Type: OpCapture, IntentID: op.IntentID, Requested: op.Amount, Available: ch.Amount,
			Currency: ch.Currency}
	}
	return nil
}
