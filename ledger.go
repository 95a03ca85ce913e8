package idempay

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Ledger is what the store knows of an intent's money after its charge:
// what was charged or authorised, captured and refunded, and every refund,
// capture and cancel made of it, with the state of each. Client.Ledger
// returns it; it is a snapshot, true of the store when it was read. Its
// record is begun when the charge succeeds and never deleted.
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

// LedgerOp is one attempt of a refund, capture or cancel of an intent. Its
// State is its record's while the record exists, and was written into the
// ledger before the record was closed (so before it could expire): the
// ledger answers for it after the record is gone.
type LedgerOp struct {
	Type    OpType // refund, capture or cancel
	OpID    string // the caller's operation ID
	Attempt int    // the operation's attempt this entry stands for
	Key     string // its key
	Amount  int64  // refunded or captured (authorised, for a cancel), in minor units
	State   State  // open: the outcome is unknown; pending; succeeded; failed (it moved no money)
	// Reserved is when the attempt's record was reserved (the store's
	// clock): with Attempt and Key it tells this attempt from a later one
	// of the same ID and key, made after a sweep deleted the record. Zero
	// in entries written before it was kept.
	Reserved time.Time `json:",omitzero"`
	// Ref is the provider's ID of the refund (for a capture or cancel, of
	// what it answered), once the attempt succeeded.
	Ref string `json:",omitempty"`
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

// ledgerDoc is the ledger record's Result: the charge, written when it
// succeeded (in ledgers begun before that, when the first operation was
// reserved; a settled charge never changes), and one entry per attempt of
// an operation, written before that attempt's first byte and given its
// outcome before the attempt's record is closed.
type ledgerDoc struct {
	Charge *ledgerCharge `json:"charge,omitempty"`
	Ops    []LedgerOp    `json:"ops,omitempty"`
}

// ledgerCharge is what the operations need of the intent's charge, and
// what answers a charge of the intent once its record is gone.
type ledgerCharge struct {
	Ref        string `json:"ref"`
	Attempt    int    `json:"attempt,omitempty"` // the attempt that succeeded; 0 in ledgers written before attempts
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Authorized bool   `json:"authorized,omitempty"`
	// Key and Fingerprint are the succeeded attempt's (empty in ledgers
	// written before they were kept).
	Key         string `json:"key,omitempty"`
	Fingerprint string `json:"fp,omitempty"`
	Status      string `json:"status,omitempty"` // the provider's word for the charge
}

func decodeLedger(raw []byte) (ledgerDoc, error) {
	if len(raw) == 0 {
		return ledgerDoc{}, nil // a new ledger: nothing to decode, nothing moved to the heap
	}
	var d ledgerDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("%w: ledger unreadable: %w", ErrStore, err)
	}
	return d, nil
}

func (d ledgerDoc) encode() []byte {
	b, _ := json.Marshal(d) // strings, numbers and bools only
	return b
}

// entry finds the entry of attempt a of the operation (t, id): the one
// an earlier call entered before it may have sent it.
func (d *ledgerDoc) entry(t OpType, id string, a attemptID) (*LedgerOp, bool) {
	for i := range d.Ops {
		if e := &d.Ops[i]; e.Type == t && e.OpID == id && a.is(*e) {
			return e, true
		}
	}
	return nil, false
}

// attemptID names one attempt of one record: its number, its key and when
// its record reserved it. A record deleted by a sweep and reserved again
// for the same ID starts at attempt 1 again, perhaps with the same caller
// key, but never at the same instant.
type attemptID struct {
	attempt  int
	key      string
	reserved time.Time
}

func currentAttempt(rec Record) attemptID {
	return attemptID{attempt: rec.Attempt, key: rec.Key, reserved: rec.CreatedAt}
}

// is reports whether e is the entry of attempt a. An entry written before
// Reserved was kept matches on the number and key alone. Instants compare
// at the microsecond, the precision every store keeps (storetest).
func (a attemptID) is(e LedgerOp) bool {
	const us = time.Microsecond
	return e.Attempt == a.attempt && e.Key == a.key &&
		(e.Reserved.IsZero() || e.Reserved.Truncate(us).Equal(a.reserved.Truncate(us)))
}

// ofRecord reports whether e is the entry of an attempt rec holds, current
// or past: false for the entries of an earlier record of the same ID,
// which a sweep deleted.
func ofRecord(e LedgerOp, rec Record) bool {
	if currentAttempt(rec).is(e) {
		return true
	}
	for _, p := range rec.History {
		if (attemptID{attempt: p.Attempt, key: p.Key, reserved: p.CreatedAt}).is(e) {
			return true
		}
	}
	return false
}

// forgotten returns the entries of the operation (t, id) whose record is
// no longer rec: the same operation made before, under a record a sweep
// deleted. Their states were written before their records were closed.
func (d ledgerDoc) forgotten(t OpType, id string, rec Record) []LedgerOp {
	var out []LedgerOp
	for _, e := range d.Ops {
		if e.Type == t && e.OpID == id && !ofRecord(e, rec) {
			out = append(out, e)
		}
	}
	return out
}

// keyOf returns an entry that sent key for another operation than (t, id).
func (d ledgerDoc) keyOf(key string, t OpType, id string) (LedgerOp, bool) {
	for _, e := range d.Ops {
		if e.Key == key && (e.Type != t || e.OpID != id) {
			return e, true
		}
	}
	return LedgerOp{}, false
}

// latest is the last entry of the operation (t, id), if any.
func (d ledgerDoc) latest(t OpType, id string) (LedgerOp, bool) {
	for i := len(d.Ops) - 1; i >= 0; i-- {
		if e := d.Ops[i]; e.Type == t && e.OpID == id {
			return e, true
		}
	}
	return LedgerOp{}, false
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
