package fakes

import (
	"errors"
	"maps"
	"slices"
)

// IntendRefund says that the consumer under test means to refund amount
// of intent (over every merchant), in all: calls add up. Check then
// reports RefundedBeyondIntent when the intent's refunds that may have
// moved money come to more. The books alone cannot see this bug: two
// refunds of 500 on a charge of 1500 are within the charge, whether the
// consumer meant one or two. Intents with no intention are not judged.
func (l *Ledger) IntendRefund(intent string, amount int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meant == nil {
		l.meant = map[string]int64{}
	}
	l.meant[intent] += amount
}

// CheckIntended returns the RefundedBeyondIntent violations of ops against
// meant, the refunds meant per intent, in the order of the intents' first
// refunds.
func CheckIntended(ops []Op, meant map[string]int64) []Violation {
	var v []Violation
	byIntent := groups(ops, func(o Op) (string, bool) {
		_, judged := meant[o.Intent]
		return o.Intent, judged && o.Type == OpRefund && o.moves()
	})
	for _, g := range byIntent {
		var sum int64
		x := Violation{Kind: RefundedBeyondIntent, Merchant: g[0].Merchant, Intent: g[0].Intent, Limit: meant[g[0].Intent]}
		for _, o := range g {
			sum += o.Amount
			x.IDs, x.Keys, x.OpIDs = append(x.IDs, o.ID), append(x.Keys, o.Key), append(x.OpIDs, o.OpID)
		}
		if x.Amount = sum; sum > x.Limit {
			v = append(v, x)
		}
	}
	return v
}

// Intended returns the refunds meant per intent, as IntendRefund added
// them up.
func (l *Ledger) Intended() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.meant)
}

// joinMoney is err (nil or a *MoneyError) with the violations more added.
func joinMoney(err error, more []Violation) error {
	if len(more) == 0 {
		return err
	}
	var me *MoneyError
	if !errors.As(err, &me) {
		return &MoneyError{Violations: slices.Clone(more)}
	}
	return &MoneyError{Violations: append(slices.Clone(me.Violations), more...)}
}
