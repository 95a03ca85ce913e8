package fakes

import (
	"slices"
	"sync"
	"time"
)

// Charge is one movement of money a fake made: a charge that succeeded, or
// an authorisation held on a card (Authorized), to be captured or
// cancelled.
type Charge struct {
	ID       string // the provider's charge, PaymentIntent or invoice
	Merchant string // the account charged for, as the fake scopes keys
	Intent   string // the idempay intent ID, from the charge's metadata (2C2P: the invoiceNo)
	Key      string // the idempotency key of the request that charged
	Amount   int64  // charged or authorised, in the provider's minor units
	Currency string // as the provider reported it
	// Authorized says the charge is an authorisation, captured later by
	// Ops of type OpCapture; otherwise it was captured when made.
	Authorized bool
	Time       time.Time // when the money moved, by the fake's clock
}

// OpType is the kind of an Op.
type OpType string

// The operations a fake records.
const (
	OpRefund  OpType = "refund"  // money given back
	OpCapture OpType = "capture" // an authorisation captured, in part or whole
	OpCancel  OpType = "cancel"  // an authorisation released (Stripe cancel, Omise reverse, 2C2P void)
)

// OpStatus is where an Op stands.
type OpStatus string

// The states of an Op. A pending op may still move money and counts as if
// it had; a failed one moved none and counts for nothing.
const (
	OpSucceeded OpStatus = "succeeded"
	OpPending   OpStatus = "pending"
	OpFailed    OpStatus = "failed"
)

// Op is one refund, capture or cancel a fake carried out.
type Op struct {
	Type     OpType    // refund, capture or cancel
	ID       string    // the provider's object: re_..., rfnd_..., the charge's ID for a capture or cancel
	OpID     string    // the caller's operation ID, as tagged (metadata idempay_op, refund_id, ...); may be empty
	ChargeID string    // the Charge it acts on
	Merchant string    // as Charge.Merchant
	Intent   string    // the Charge's intent
	Key      string    // the idempotency key of the request that made it
	Amount   int64     // refunded or captured; the authorised amount for a cancel
	Currency string    // as the provider reported it
	Status   OpStatus  // succeeded, pending or failed
	Time     time.Time // when it was made, by the fake's clock
}

// moves reports whether o may have moved money (succeeded or pending).
func (o Op) moves() bool { return o.Status != OpFailed }

// Ledger is a fake's books: every charge and operation it made, oldest
// first. Fakes write it (Add, Decide, SetStatus) in the same critical
// section as the answer they store, so that an answer never exists without
// its record; tests read it. Its zero value is empty and ready, and it is
// safe for concurrent use.
type Ledger struct {
	decide  sync.Mutex // held across one operation's decision and its record
	mu      sync.Mutex // guards what follows; never held while calling out
	charges []Charge
	ops     []Op
	byID    map[chargeKey]int   // index of the first charge with an ID
	opsOf   map[chargeKey][]int // indexes of each charge's ops
	meant   map[string]int64    // the refunds the consumer meant, per intent (see IntendRefund)
}

// chargeKey names a charge in the books: IDs are the provider's, scoped
// by the account that made them.
type chargeKey struct{ merchant, id string }

// Add records a charge.
func (l *Ledger) Add(c Charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[chargeKey]int{}
	}
	if _, dup := l.byID[chargeKey{c.Merchant, c.ID}]; !dup {
		l.byID[chargeKey{c.Merchant, c.ID}] = len(l.charges)
	}
	l.charges = append(l.charges, c)
}

// Charges returns every charge, oldest first.
func (l *Ledger) Charges() []Charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.charges)
}

// Ops returns every refund, capture and cancel, oldest first.
func (l *Ledger) Ops() []Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ops)
}

// Len returns the number of charges.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.charges)
}

// Count returns the number of charges for an intent, over all merchants:
// exactly one is what idempay promises.
func (l *Ledger) Count(intent string) int {
	n := 0
	for _, c := range l.Charges() {
		if c.Intent == intent {
			n++
		}
	}
	return n
}

// Find returns the first charge for an intent under merchant.
func (l *Ledger) Find(merchant, intent string) (Charge, bool) {
	for _, c := range l.Charges() {
		if c.Merchant == merchant && c.Intent == intent {
			return c, true
		}
	}
	return Charge{}, false
}

// OpCount returns how many operations were carried out under an operation
// ID (of any type, over all merchants, failed ones included): a refund made
// once shows 1.
func (l *Ledger) OpCount(opID string) int {
	n := 0
	for _, o := range l.Ops() {
		if o.OpID == opID {
			n++
		}
	}
	return n
}

// Refunded returns the sum of an intent's refunds that may have moved
// money (succeeded or pending), over all merchants.
func (l *Ledger) Refunded(intent string) int64 {
	var n int64
	for _, o := range l.Ops() {
		if o.Type == OpRefund && o.Intent == intent && o.moves() {
			n += o.Amount
		}
	}
	return n
}

// Check returns a *MoneyError naming every way money moved wrong (see
// Check), or nil.
func (l *Ledger) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return joinMoney(Check(l.charges, l.ops), CheckIntended(l.ops, l.meant))
}
