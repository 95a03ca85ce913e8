package refserver

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Op is one refund, capture or cancel the server carried out: money given
// back, an authorisation moved, or one released.
type Op struct {
	Type     string    // "refund", "capture" or "cancel"
	ID       string    // the server's ID: re_... for a refund, the charge's ID otherwise
	OpID     string    // the body's refund_id, capture_id or cancel_id
	ChargeID string    // the charge it acts on
	Merchant string    // the tenant, as Charge.Merchant
	Intent   string    // the body's order_id
	Key      string    // the idempotency key it was made under
	Amount   int64     // refunded or captured (the authorised amount for a cancel)
	Currency string    // "JPY"
	Time     time.Time // by the server's clock
}

// OpLedger records every refund, capture and cancel the server makes, each
// in the same critical section as its stored answer, and the charges they
// act on. Its methods are safe for concurrent use.
type OpLedger struct {
	mu  sync.Mutex // held across a decision and its commit (see Server.commitOp)
	ops []Op

	cmu     sync.Mutex // guards charges; taken inside a charge's commit
	charges map[scope]chargeState
}

type scope struct{ merchant, intent string }

// chargeState is what the operations need of a charge.
type chargeState struct {
	id         string
	amount     int64
	authorized bool
}

func newOpLedger() *OpLedger { return &OpLedger{charges: map[scope]chargeState{}} }

// charged records a charge, from inside its commit.
func (l *OpLedger) charged(c Charge, authorized bool) {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	sc := scope{c.Merchant, c.Intent}
	if _, ok := l.charges[sc]; !ok { // the first charge is the one operations act on
		l.charges[sc] = chargeState{id: c.ID, amount: c.Amount, authorized: authorized}
	}
}

func (l *OpLedger) charge(merchant, intent string) (chargeState, bool) {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	c, ok := l.charges[scope{merchant, intent}]
	return c, ok
}

// Ops returns every operation, oldest first.
func (l *OpLedger) Ops() []Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Op(nil), l.ops...)
}

// Refunded is the sum of the refunds of an intent, over all merchants.
func (l *OpLedger) Refunded(intent string) int64 {
	var n int64
	for _, o := range l.Ops() {
		if o.Type == opRefund.name && o.Intent == intent {
			n += o.Amount
		}
	}
	return n
}

// Count is how many operations were carried out under an operation ID.
func (l *OpLedger) Count(opID string) int {
	n := 0
	for _, o := range l.Ops() {
		if o.OpID == opID {
			n++
		}
	}
	return n
}

// find returns a merchant's operation of type t by its ID.
func (l *OpLedger) find(t opType, merchant, opID string) (Op, bool) {
	for _, o := range l.Ops() {
		if o.Type == t.name && o.Merchant == merchant && o.OpID == opID {
			return o, true
		}
	}
	return Op{}, false
}

// state sums an intent's operations; l.mu is held.
func (l *OpLedger) state(merchant, intent string) (refunded, captured int64, captures, cancels int) {
	for _, o := range l.ops {
		if o.Merchant != merchant || o.Intent != intent {
			continue
		}
		switch o.Type {
		case opRefund.name:
			refunded += o.Amount
		case opCapture.name:
			captured += o.Amount
			captures++
		case opCancel.name:
			cancels++
		}
	}
	return refunded, captured, captures, cancels
}

// Check returns an *OpViolationError naming every way the operations went
// wrong, or nil: an operation ID carried out twice (refunded twice, say),
// refunds beyond what was charged or captured, an authorisation captured
// twice, beyond its amount, or both captured and cancelled, a capture or
// cancel of a charge that was not an authorisation. What the SDK must
// never cause, as Ledger.Check is for charges.
func (l *OpLedger) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v []string
	seen := map[[3]string]int{}
	intents := map[scope]bool{}
	for _, o := range l.ops {
		seen[[3]string{o.Type, o.Merchant, o.OpID}]++
		intents[scope{o.Merchant, o.Intent}] = true
	}
	for k, n := range seen {
		if n > 1 {
			v = append(v, fmt.Sprintf("%s %q (merchant %q) carried out %d times", k[0], k[2], k[1], n))
		}
	}
	for sc := range intents {
		v = append(v, l.violations(sc)...)
	}
	if v == nil {
		return nil
	}
	slices.Sort(v)
	return &OpViolationError{Violations: v}
}

// violations are an intent's breaches of its charge; l.mu is held.
func (l *OpLedger) violations(sc scope) []string {
	var v []string
	c, _ := l.charge(sc.merchant, sc.intent)
	refunded, captured, captures, cancels := l.state(sc.merchant, sc.intent)
	if !c.authorized {
		captured = c.amount
	}
	name := fmt.Sprintf("intent %q (merchant %q)", sc.intent, sc.merchant)
	if refunded > captured {
		v = append(v, fmt.Sprintf("%s refunded %d, more than the %d charged or captured", name, refunded, captured))
	}
	switch {
	case !c.authorized && captures+cancels > 0:
		v = append(v, fmt.Sprintf("%s captured or cancelled, but it was no authorisation", name))
	case captures > 1, captures > 0 && cancels > 0:
		v = append(v, fmt.Sprintf("%s captured %d times and cancelled %d times", name, captures, cancels))
	case captured > c.amount:
		v = append(v, fmt.Sprintf("%s captured %d, more than the %d authorised", name, captured, c.amount))
	}
	return v
}

// OpViolationError lists what OpLedger.Check found.
type OpViolationError struct {
	Violations []string // one sentence each, sorted
}

// Error lists the violations.
func (e *OpViolationError) Error() string {
	return "refserver: operations went wrong: " + strings.Join(e.Violations, "; ")
}
