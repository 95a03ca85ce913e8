package fakes

// Balance is where one charge stands in the books, as a provider sees it
// when it decides a refund, capture or cancel of it.
type Balance struct {
	Charge Charge // the charge, as the books hold it
	// Captured is what was captured: the charge's amount unless it is an
	// authorisation, the sum of its captures if it is.
	Captured int64
	// Refunded sums the refunds that may have moved money (succeeded and
	// pending; failed ones count for nothing).
	Refunded int64
	// Captures and Cancels count the captures and cancels that may have
	// moved money.
	Captures, Cancels int
}

// Refundable is what may still be refunded: what was captured less what
// was refunded, never below zero.
func (b Balance) Refundable() int64 { return max(b.Captured-b.Refunded, 0) }

// Problem is what a provider refuses in an operation on a charge.
type Problem int

// The refusals Balance.Problem finds. Each fake answers them in its
// provider's shape.
const (
	// NoProblem: the operation may go through.
	NoProblem Problem = iota
	// NotCaptured: a refund of an authorisation that was not captured.
	NotCaptured
	// Cancelled: a refund of an authorisation that was cancelled.
	Cancelled
	// RefundExceeds: a refund of more than is left to refund.
	RefundExceeds
	// NotAuthorization: a capture or cancel of a charge captured when it
	// was made.
	NotAuthorization
	// AuthorizationClosed: a capture or cancel of an authorisation already
	// captured or cancelled.
	AuthorizationClosed
	// CaptureExceeds: a capture of more than was authorised.
	CaptureExceeds
)

var problemNames = [...]string{"none", "not_captured", "cancelled", "refund_exceeds", "not_authorization",
	"authorization_closed", "capture_exceeds"}

// String is the problem in snake case.
func (p Problem) String() string {
	if p >= 0 && int(p) < len(problemNames) {
		return problemNames[p]
	}
	return "problem"
}

// Problem says what a provider refuses in an operation of type t for
// amount (a capture's or refund's; ignored for a cancel) on the charge, or
// NoProblem. The rules are the ones Stripe, Omise and 2C2P share: one
// capture or one cancel per authorisation, never beyond it; refunds only
// of what was captured, summed over every refund that may move money.
func (b Balance) Problem(t OpType, amount int64) Problem {
	auth := b.Charge.Authorized
	switch {
	case t == OpRefund && auth && b.Cancels > 0:
		return Cancelled
	case t == OpRefund && auth && b.Captures == 0:
		return NotCaptured
	case t == OpRefund && amount > b.Refundable():
		return RefundExceeds
	case t == OpRefund:
		return NoProblem
	case !auth:
		return NotAuthorization
	case b.Captures > 0 || b.Cancels > 0:
		return AuthorizationClosed
	case t == OpCapture && amount > b.Charge.Amount:
		return CaptureExceeds
	}
	return NoProblem
}

// balanceOf sums the ops of charge i; l.mu is held.
func (l *Ledger) balanceOf(i int, k chargeKey) Balance {
	b := Balance{Charge: l.charges[i]}
	for _, j := range l.opsOf[k] {
		o := l.ops[j]
		if !o.moves() {
			continue
		}
		switch o.Type {
		case OpRefund:
			b.Refunded += o.Amount
		case OpCapture:
			b.Captured += o.Amount
			b.Captures++
		case OpCancel:
			b.Cancels++
		}
	}
	if !b.Charge.Authorized {
		b.Captured = b.Charge.Amount
	}
	return b
}

// Balance returns where merchant's charge chargeID stands, and whether the
// books hold it.
func (l *Ledger) Balance(merchant, chargeID string) (Balance, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := chargeKey{merchant, chargeID}
	i, ok := l.byID[k]
	if !ok {
		return Balance{}, false
	}
	return l.balanceOf(i, k), true
}

// Decide runs one operation's decision under the books' operation lock, so
// that two operations of one charge never both pass a check only one of
// them may pass. decide gets the Balance of merchant's charge chargeID
// (found false when the books hold none) and a record function that enters
// an op in the books; it calls record at most once, in the same critical
// section as the answer it stores (inside a KeyTable commit, say), or not
// at all for a refusal. decide must not call Decide or SetStatus.
func (l *Ledger) Decide(merchant, chargeID string, decide func(b Balance, found bool, record func(Op))) {
	l.decide.Lock()
	defer l.decide.Unlock()
	b, found := l.Balance(merchant, chargeID)
	decide(b, found, l.record)
}

// record enters o; l.decide is held.
func (l *Ledger) record(o Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.Status == "" {
		o.Status = OpSucceeded
	}
	if l.opsOf == nil {
		l.opsOf = map[chargeKey][]int{}
	}
	k := chargeKey{o.Merchant, o.ChargeID}
	l.opsOf[k] = append(l.opsOf[k], len(l.ops))
	l.ops = append(l.ops, o)
}

// SetStatus moves merchant's op whose provider ID is id (a pending refund,
// say) to status, and reports whether there was such an op. A failed op
// frees what it held.
func (l *Ledger) SetStatus(merchant, id string, status OpStatus) bool {
	l.decide.Lock()
	defer l.decide.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.ops {
		if l.ops[i].Merchant == merchant && l.ops[i].ID == id {
			l.ops[i].Status = status
			return true
		}
	}
	return false
}
