package idempaytest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// DuplicateChargeError is returned by Server.CheckNoDuplicates when some
// intent was charged more than once: the double charge idempay exists to
// prevent.
type DuplicateChargeError struct {
	Duplicates []Duplicate // one per intent charged more than once
}

// Duplicate is one intent charged more than once.
type Duplicate struct {
	IntentID  string   // the intent charged more than once
	Keys      []string // the key of each charge, oldest first
	ChargeIDs []string // the server's ID of each charge, oldest first
}

// Error names each intent, how often it was charged and under which keys:
// different keys point at code that lost or regenerated its key, one key
// at a server that forgot it.
func (e *DuplicateChargeError) Error() string {
	var b strings.Builder
	b.WriteString("idempaytest: charged more than once:")
	for i, d := range e.Duplicates {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " intent %q %d times (keys %s)", d.IntentID, len(d.ChargeIDs), strings.Join(d.Keys, ", "))
	}
	return b.String()
}

// CheckNoDuplicates returns a *DuplicateChargeError if the server charged
// any intent more than once, and nil otherwise. CheckMoney checks refunds,
// captures and cancels too.
func (s *Server) CheckNoDuplicates() error {
	var me *fakes.MoneyError
	if !errors.As(s.api.Ledger().Check(), &me) {
		return nil
	}
	out := &DuplicateChargeError{}
	for _, v := range me.Violations {
		if v.Kind == fakes.ChargedTwice {
			out.Duplicates = append(out.Duplicates, Duplicate{IntentID: v.Intent, Keys: v.Keys, ChargeIDs: v.IDs})
		}
	}
	if out.Duplicates == nil {
		return nil
	}
	return out
}
