package fakes

import (
	"fmt"
	"strings"
)

// ViolationKind is one way money moved wrong.
type ViolationKind int

// The violations Check finds: what a client must never cause.
const (
	// ChargedTwice: an intent of one merchant charged more than once, or
	// one idempotency key charging more than one intent (2C2P's invoices).
	ChargedTwice ViolationKind = iota + 1
	// RefundedTwice: one refund (one operation ID) made more than once.
	RefundedTwice
	// RefundedBeyondCharge: a charge's refunds, summed over every refund
	// that may have moved money, beyond what was charged or captured (an
	// authorisation never captured has nothing to refund).
	RefundedBeyondCharge
	// CapturedTwice: an authorisation captured more than once.
	CapturedTwice
	// CapturedBeyondAuthorization: an authorisation captured beyond its
	// amount.
	CapturedBeyondAuthorization
	// CapturedAndCanceled: an authorisation both captured and cancelled.
	CapturedAndCanceled
	// CapturedNonAuthorization: a capture or cancel of a charge that was
	// captured when it was made.
	CapturedNonAuthorization
	// UnknownCharge: operations on a charge the books do not hold.
	UnknownCharge
	// RefundedBeyondIntent: an intent's refunds, summed over every refund
	// that may have moved money, beyond what the consumer said it meant to
	// refund (Ledger.IntendRefund): a refund retried under a new refund ID
	// while its first outcome was unknown, say.
	RefundedBeyondIntent
)

var kindNames = [...]string{"", "charged_twice", "refunded_twice", "refunded_beyond_charge", "captured_twice",
	"captured_beyond_authorization", "captured_and_cancelled", "captured_non_authorization", "unknown_charge",
	"refunded_beyond_intent"}

// String is the kind in snake case.
func (k ViolationKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "violation"
}

// Violation is one breach Check found, with what it involves.
type Violation struct {
	Kind     ViolationKind // what went wrong
	Merchant string        // the account
	Intent   string        // the intent charged, or whose charge the operations act on
	ChargeID string        // the charge acted on (empty for ChargedTwice)
	OpID     string        // the operation ID made twice (RefundedTwice)
	// IDs and Keys are the provider's IDs and the idempotency keys of the
	// charges or operations involved, oldest first: different keys point at
	// a client that lost or regenerated its key, one key at a provider that
	// forgot it.
	IDs, Keys []string
	// Amount is what was refunded or captured in all, and Limit what was
	// charged, captured or authorised (RefundedBeyondCharge,
	// CapturedBeyondAuthorization), or meant (RefundedBeyondIntent).
	Amount, Limit int64
	// OpIDs are the operation IDs of the refunds involved
	// (RefundedBeyondIntent), oldest first.
	OpIDs []string
}

// String is the violation in one sentence.
func (v Violation) String() string {
	who := fmt.Sprintf("intent %q (merchant %q)", v.Intent, v.Merchant)
	switch v.Kind {
	case ChargedTwice:
		return fmt.Sprintf("%s charged %d times under keys %q", who, len(v.IDs), v.Keys)
	case RefundedTwice:
		return fmt.Sprintf("refund %q of %s made %d times under keys %q", v.OpID, who, len(v.IDs), v.Keys)
	case RefundedBeyondCharge:
		return fmt.Sprintf("%s: %s refunded %d, more than the %d charged or captured", who, v.ChargeID, v.Amount, v.Limit)
	case CapturedTwice:
		return fmt.Sprintf("%s: authorisation %s captured %d times under keys %q", who, v.ChargeID, len(v.IDs), v.Keys)
	case CapturedBeyondAuthorization:
		return fmt.Sprintf("%s: authorisation %s captured %d, more than the %d authorised", who, v.ChargeID, v.Amount, v.Limit)
	case CapturedAndCanceled:
		return fmt.Sprintf("%s: authorisation %s both captured and cancelled", who, v.ChargeID)
	case CapturedNonAuthorization:
		return fmt.Sprintf("%s: %s captured or cancelled, but it was captured when charged", who, v.ChargeID)
	case UnknownCharge:
		return fmt.Sprintf("%s: %d operations on %s, which was never charged", who, len(v.IDs), v.ChargeID)
	case RefundedBeyondIntent:
		return fmt.Sprintf("intent %q refunded %d in %d refunds %q, more than the %d meant", v.Intent, v.Amount,
			len(v.IDs), v.OpIDs, v.Limit)
	}
	return who + ": " + v.Kind.String()
}

// MoneyError is what Check returns when money moved wrong: every
// violation, in the order of the records that show it.
type MoneyError struct {
	Violations []Violation // every one found, in the order of the records
}

// Error lists the violations.
func (e *MoneyError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return "fakes: money moved wrong: " + strings.Join(parts, "; ")
}

// Has reports whether e holds a violation of kind k.
func (e *MoneyError) Has(k ViolationKind) bool {
	for _, v := range e.Violations {
		if v.Kind == k {
			return true
		}
	}
	return false
}

// Check returns a *MoneyError naming every violation in charges and ops,
// or nil: an intent charged twice (or one key charging two intents), a
// refund made twice, refunds beyond a charge or its capture, an
// authorisation captured twice, beyond its amount, or both captured and
// cancelled, a capture or cancel of a charge captured when made,
// operations on a charge never made. Failed operations count for nothing,
// pending ones as if they had succeeded. It recomputes everything from the
// records given.
func Check(charges []Charge, ops []Op) error {
	var v []Violation
	v = append(v, chargedTwice(charges)...)
	v = append(v, refundedTwice(ops)...)
	v = append(v, opViolations(charges, ops)...)
	if v == nil {
		return nil
	}
	return &MoneyError{Violations: v}
}

// groups gathers items by key in first-seen order.
func groups[T any, K comparable](items []T, key func(T) (K, bool)) [][]T {
	index := map[K]int{}
	var out [][]T
	for _, it := range items {
		k, ok := key(it)
		if !ok {
			continue
		}
		i, seen := index[k]
		if !seen {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], it)
	}
	return out
}

func chargedTwice(charges []Charge) []Violation {
	var v []Violation
	byIntent := groups(charges, func(c Charge) ([2]string, bool) { return [2]string{c.Merchant, c.Intent}, c.Intent != "" })
	for _, g := range byIntent {
		if len(g) > 1 {
			v = append(v, chargeViolation(g))
		}
	}
	byKey := groups(charges, func(c Charge) ([2]string, bool) { return [2]string{c.Merchant, c.Key}, c.Key != "" })
	for _, g := range byKey {
		// One key charging one intent twice is reported above; one key
		// charging two intents (two invoices of one attempt) is not.
		if len(groups(g, func(c Charge) (string, bool) { return c.Intent, true })) > 1 {
			v = append(v, chargeViolation(g))
		}
	}
	return v
}

func chargeViolation(g []Charge) Violation {
	x := Violation{Kind: ChargedTwice, Merchant: g[0].Merchant, Intent: g[0].Intent}
	for _, c := range g {
		x.IDs, x.Keys = append(x.IDs, c.ID), append(x.Keys, c.Key)
	}
	return x
}

func refundedTwice(ops []Op) []Violation {
	var v []Violation
	byOpID := groups(ops, func(o Op) ([2]string, bool) {
		return [2]string{o.Merchant, o.OpID}, o.Type == OpRefund && o.OpID != "" && o.moves()
	})
	for _, g := range byOpID {
		if len(g) > 1 {
			v = append(v, opViolation(RefundedTwice, g, Violation{OpID: g[0].OpID}))
		}
	}
	return v
}

func opViolation(k ViolationKind, g []Op, x Violation) Violation {
	x.Kind, x.Merchant, x.Intent, x.ChargeID = k, g[0].Merchant, g[0].Intent, g[0].ChargeID
	for _, o := range g {
		x.IDs, x.Keys = append(x.IDs, o.ID), append(x.Keys, o.Key)
	}
	return x
}

// opViolations checks each charge's operations against the charge.
func opViolations(charges []Charge, ops []Op) []Violation {
	first := map[chargeKey]Charge{}
	for _, c := range charges {
		if _, ok := first[chargeKey{c.Merchant, c.ID}]; !ok {
			first[chargeKey{c.Merchant, c.ID}] = c
		}
	}
	var v []Violation
	moving := groups(ops, func(o Op) (chargeKey, bool) { return chargeKey{o.Merchant, o.ChargeID}, o.moves() })
	for _, g := range moving {
		c, ok := first[chargeKey{g[0].Merchant, g[0].ChargeID}]
		if !ok {
			v = append(v, opViolation(UnknownCharge, g, Violation{}))
			continue
		}
		v = append(v, chargeOps(c, g)...)
	}
	return v
}

// chargeOps are the violations of one charge's moving operations.
func chargeOps(c Charge, g []Op) []Violation {
	var refunded, captured int64
	var captures, cancels []Op
	for _, o := range g {
		switch o.Type {
		case OpRefund:
			refunded += o.Amount
		case OpCapture:
			captured += o.Amount
			captures = append(captures, o)
		case OpCancel:
			cancels = append(cancels, o)
		}
	}
	var v []Violation
	limit := c.Amount
	switch {
	case !c.Authorized && len(captures)+len(cancels) > 0:
		v = append(v, opViolation(CapturedNonAuthorization, append(captures, cancels...), Violation{}))
	case c.Authorized:
		limit = captured
		if len(captures) > 1 {
			v = append(v, opViolation(CapturedTwice, captures, Violation{}))
		}
		if len(captures) > 0 && len(cancels) > 0 {
			v = append(v, opViolation(CapturedAndCanceled, append(captures, cancels...), Violation{}))
		}
		if captured > c.Amount {
			v = append(v, opViolation(CapturedBeyondAuthorization, captures, Violation{Amount: captured, Limit: c.Amount}))
		}
	}
	if refunded > limit {
		v = append(v, opViolation(RefundedBeyondCharge, refundsOf(g), Violation{Amount: refunded, Limit: limit}))
	}
	return v
}

func refundsOf(g []Op) []Op {
	var out []Op
	for _, o := range g {
		if o.Type == OpRefund {
			out = append(out, o)
		}
	}
	return out
}
