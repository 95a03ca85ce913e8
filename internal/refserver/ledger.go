package refserver

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Charge is one real charge: money that moved.
type Charge struct {
	// Merchant is the tenant the key was scoped to: the merchant ID that
	// Config.Auth maps the bearer secret to (or the bearer secret itself
	// when Auth is empty), joined by "/" with the Merchant-Id header when
	// both are present; empty when neither was sent.
	Merchant  string
	OrderID   string
	Key       string // the idempotency key it was made under
	AmountJPY int64
	ChargeID  string
	Metadata  map[string]string
	Time      time.Time
}

// Ledger records every charge the server makes. Its methods are safe for
// concurrent use; the zero value is an empty ledger.
type Ledger struct {
	mu      sync.Mutex
	charges []Charge
}

// add records c. The server calls it while holding the key store's lock,
// so that a charge and its stored response appear together.
func (l *Ledger) add(c Charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.charges = append(l.charges, c)
}

// Charges returns every charge, oldest first.
func (l *Ledger) Charges() []Charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Charge(nil), l.charges...)
}

// Len returns the number of charges.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.charges)
}

// Count returns the number of charges for orderID, over all merchants.
func (l *Ledger) Count(orderID string) int {
	n := 0
	for _, c := range l.Charges() {
		if c.OrderID == orderID {
			n++
		}
	}
	return n
}

// Find returns the first charge for orderID under merchant.
func (l *Ledger) Find(merchant, orderID string) (Charge, bool) {
	for _, c := range l.Charges() {
		if c.Merchant == merchant && c.OrderID == orderID {
			return c, true
		}
	}
	return Charge{}, false
}

// Check returns a *DuplicateChargeError if any order of any merchant was
// charged more than once, and nil otherwise.
func (l *Ledger) Check() error {
	type order struct{ merchant, id string }
	byOrder := map[order][]Charge{}
	var seen []order // first-charge order, so the report is stable
	for _, c := range l.Charges() {
		o := order{c.Merchant, c.OrderID}
		if byOrder[o] == nil {
			seen = append(seen, o)
		}
		byOrder[o] = append(byOrder[o], c)
	}
	var dups []Duplicate
	for _, o := range seen {
		if cs := byOrder[o]; len(cs) > 1 {
			dups = append(dups, Duplicate{Merchant: o.merchant, OrderID: o.id, Charges: cs})
		}
	}
	if dups == nil {
		return nil
	}
	return &DuplicateChargeError{Duplicates: dups}
}

// Duplicate is one order charged more than once.
type Duplicate struct {
	Merchant string
	OrderID  string
	Charges  []Charge
}

// DuplicateChargeError is returned by Ledger.Check when some order was
// charged more than once.
type DuplicateChargeError struct {
	Duplicates []Duplicate
}

// Error lists each order charged more than once and the keys used.
func (e *DuplicateChargeError) Error() string {
	var b strings.Builder
	b.WriteString("refserver: orders charged more than once:")
	for _, d := range e.Duplicates {
		keys := make([]string, len(d.Charges))
		for i, c := range d.Charges {
			keys[i] = c.Key
		}
		fmt.Fprintf(&b, " order %q (merchant %q) %d times under keys %q;",
			d.OrderID, d.Merchant, len(d.Charges), keys)
	}
	return strings.TrimSuffix(b.String(), ";")
}
