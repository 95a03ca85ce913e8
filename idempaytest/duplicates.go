package idempaytest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idempay/idempay/internal/refserver"
)

// DuplicateChargeError is returned by Server.CheckNoDuplicates when some
// intent was charged more than once: the double charge idempay exists to
// prevent.
type DuplicateChargeError struct {
	Duplicates []Duplicate
}

// Duplicate is one intent charged more than once.
type Duplicate struct {
	IntentID  string
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
// any intent more than once, and nil otherwise.
func (s *Server) CheckNoDuplicates() error {
	err := s.api.Ledger().Check()
	var dup *refserver.DuplicateChargeError
	if !errors.As(err, &dup) {
		return err // nil: the ledger returns nothing else
	}
	out := &DuplicateChargeError{}
	for _, d := range dup.Duplicates {
		x := Duplicate{IntentID: d[0].Intent}
		for _, c := range d {
			x.Keys = append(x.Keys, c.Key)
			x.ChargeIDs = append(x.ChargeIDs, c.ID)
		}
		out.Duplicates = append(out.Duplicates, x)
	}
	return out
}
