package faults

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Charge is one movement of money a fake made.
type Charge struct {
	ID       string    // the provider's charge or payment intent ID
	Merchant string    // the account charged for, as the fake scopes it
	Intent   string    // the idempay intent ID, from the charge's metadata
	Key      string    // the idempotency key of the request that charged
	Amount   int64     // in the provider's units
	Currency string    // as the provider reported it
	Time     time.Time // when the money moved, by the fake's clock
}

// Ledger records every real charge. Its zero value is empty and ready;
// it is safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	charges []Charge
}

// Add records a charge.
func (l *Ledger) Add(c Charge) {
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

// Count returns the number of charges for an intent, over all merchants.
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

// Check returns a *DuplicateError naming every intent of a merchant that
// was charged more than once, or nil: what the SDK must never cause.
func (l *Ledger) Check() error {
	type intent struct{ merchant, id string }
	by := map[intent][]Charge{}
	var order []intent // first-charge order, so the report is stable
	for _, c := range l.Charges() {
		k := intent{c.Merchant, c.Intent}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], c)
	}
	var dups [][]Charge
	for _, k := range order {
		if len(by[k]) > 1 {
			dups = append(dups, by[k])
		}
	}
	if dups == nil {
		return nil
	}
	return &DuplicateError{Duplicates: dups}
}

// DuplicateError lists the intents charged more than once, each as the
// charges made for it.
type DuplicateError struct {
	Duplicates [][]Charge // one slice per intent, its charges oldest first
}

// Error names each intent, its merchant, and the keys that charged it.
func (e *DuplicateError) Error() string {
	var b strings.Builder
	b.WriteString("faults: intents charged more than once:")
	for _, cs := range e.Duplicates {
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.Key
		}
		fmt.Fprintf(&b, " %q (merchant %q) %d times under keys %q;", cs[0].Intent, cs[0].Merchant, len(cs), keys)
	}
	return strings.TrimSuffix(b.String(), ";")
}
