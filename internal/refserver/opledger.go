package refserver

import "github.com/idempay/idempay/idempaytest/fakes"

// OpLedger reads the refunds, captures and cancels in the server's Ledger.
// Its methods are safe for concurrent use.
type OpLedger struct{ l *fakes.Ledger }

// Ops returns every operation, oldest first.
func (o *OpLedger) Ops() []Op { return o.l.Ops() }

// Refunded is the sum of the refunds of an intent, over all merchants.
func (o *OpLedger) Refunded(intent string) int64 { return o.l.Refunded(intent) }

// Count is how many operations were carried out under an operation ID.
func (o *OpLedger) Count(opID string) int { return o.l.OpCount(opID) }

// Check returns a *fakes.MoneyError naming every way the books went wrong,
// charges included, or nil: an operation ID carried out twice (refunded
// twice), refunds beyond what was charged or captured, an authorisation
// captured twice, beyond its amount, or both captured and cancelled, a
// capture or cancel of a charge that was not an authorisation. What the
// SDK must never cause.
func (o *OpLedger) Check() error { return o.l.Check() }

// find returns a merchant's operation of type t by its ID.
func (o *OpLedger) find(t opType, merchant, opID string) (Op, bool) {
	for _, op := range o.l.Ops() {
		if op.Type == t.typ && op.Merchant == merchant && op.OpID == opID {
			return op, true
		}
	}
	return Op{}, false
}
