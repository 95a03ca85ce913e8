package fakes_test

import (
	"errors"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Rule: refunds beyond what the consumer meant are a violation, even well
// within the charge; failed refunds count for nothing; intents with no
// intention are not judged.
func TestCheckIntended(t *testing.T) {
	var l fakes.Ledger
	l.Add(charge("ch_1", "o-1", "k1", 1500, false))
	l.Add(charge("ch_2", "o-2", "k2", 1500, false))
	l.IntendRefund("o-1", 500)
	for _, o := range []fakes.Op{
		op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o-1", "k3", 500, fakes.OpSucceeded),
		op(fakes.OpRefund, "re_2", "rf-2", "ch_1", "o-1", "k4", 500, fakes.OpFailed),
		op(fakes.OpRefund, "re_3", "rf-3", "ch_2", "o-2", "k5", 900, fakes.OpSucceeded),
	} {
		record(&l, o)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("500 meant and 500 refunded: %v", err)
	}
	record(&l, op(fakes.OpRefund, "re_4", "rf-4", "ch_1", "o-1", "k6", 500, fakes.OpPending))
	var me *fakes.MoneyError
	if err := l.Check(); !errors.As(err, &me) || !me.Has(fakes.RefundedBeyondIntent) || len(me.Violations) != 1 {
		t.Fatalf("1000 refunded for 500 meant: %v", err)
	}
	v := me.Violations[0]
	if v.Intent != "o-1" || v.Amount != 1000 || v.Limit != 500 || len(v.OpIDs) != 2 {
		t.Errorf("violation %+v", v)
	}
	if got := l.Intended(); got["o-1"] != 500 || len(got) != 1 {
		t.Errorf("Intended() = %v", got)
	}
}

// record books o as a fake does, through Decide.
func record(l *fakes.Ledger, o fakes.Op) {
	l.Decide(o.Merchant, o.ChargeID, func(_ fakes.Balance, _ bool, rec func(fakes.Op)) { rec(o) })
}
