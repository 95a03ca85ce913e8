package fakes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
)

func charge(id, intent, key string, amount int64, auth bool) fakes.Charge {
	return fakes.Charge{ID: id, Merchant: "m", Intent: intent, Key: key, Amount: amount, Currency: "JPY", Authorized: auth}
}

func op(t fakes.OpType, id, opID, chargeID, intent, key string, amount int64, st fakes.OpStatus) fakes.Op {
	return fakes.Op{Type: t, ID: id, OpID: opID, ChargeID: chargeID, Merchant: "m", Intent: intent, Key: key,
		Amount: amount, Currency: "JPY", Status: st}
}

// What idempay does right passes: partial refunds adding up to the charge,
// a failed refund freeing its amount, a capture in part then refunds of
// it, a cancel of an authorisation, one intent under two merchants.
func TestCheckClean(t *testing.T) {
	charges := []fakes.Charge{
		charge("ch_1", "o1", "k1", 1000, false),
		charge("ch_2", "o2", "k2", 1000, true),
		charge("ch_3", "o3", "k3", 1000, true),
		{ID: "ch_4", Merchant: "other", Intent: "o1", Key: "k1", Amount: 1000},
	}
	ops := []fakes.Op{
		op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o1", "a", 600, fakes.OpSucceeded),
		op(fakes.OpRefund, "re_2", "rf-2", "ch_1", "o1", "b", 400, fakes.OpPending),
		op(fakes.OpRefund, "re_3", "rf-3", "ch_1", "o1", "c", 999, fakes.OpFailed),
		op(fakes.OpCapture, "ch_2", "cp-1", "ch_2", "o2", "d", 700, fakes.OpSucceeded),
		op(fakes.OpRefund, "re_4", "rf-4", "ch_2", "o2", "e", 700, fakes.OpSucceeded),
		op(fakes.OpCancel, "ch_3", "cn-1", "ch_3", "o3", "f", 1000, fakes.OpSucceeded),
	}
	if err := fakes.Check(charges, ops); err != nil {
		t.Fatal(err)
	}
}

// Each violation is caught, and said: the check a consumer runs at the end
// of a test must name what went wrong and under which keys.
func TestCheckCatchesEachViolation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		charges []fakes.Charge
		ops     []fakes.Op
		want    fakes.ViolationKind
		says    string
	}{
		{"charged twice (a new key for a lost answer)",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, false), charge("ch_2", "o1", "k2", 1000, false)}, nil,
			fakes.ChargedTwice, `intent "o1" (merchant "m") charged 2 times under keys ["k1" "k2"]`},
		{"one key charging two invoices",
			[]fakes.Charge{charge("inv1", "inv1", "k1", 1000, false), charge("inv2", "inv2", "k1", 1000, false)}, nil,
			fakes.ChargedTwice, `charged 2 times under keys ["k1" "k1"]`},
		{"refunded twice (one refund ID, two keys)",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, false)},
			[]fakes.Op{op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o1", "a", 100, fakes.OpSucceeded),
				op(fakes.OpRefund, "re_2", "rf-1", "ch_1", "o1", "b", 100, fakes.OpPending)},
			fakes.RefundedTwice, `refund "rf-1" of intent "o1" (merchant "m") made 2 times under keys ["a" "b"]`},
		{"refunded more than charged",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, false)},
			[]fakes.Op{op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o1", "a", 600, fakes.OpSucceeded),
				op(fakes.OpRefund, "re_2", "rf-2", "ch_1", "o1", "b", 600, fakes.OpPending)},
			fakes.RefundedBeyondCharge, `ch_1 refunded 1200, more than the 1000 charged or captured`},
		{"refunded more than captured",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, true)},
			[]fakes.Op{op(fakes.OpCapture, "ch_1", "cp-1", "ch_1", "o1", "a", 500, fakes.OpSucceeded),
				op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o1", "b", 501, fakes.OpSucceeded)},
			fakes.RefundedBeyondCharge, `refunded 501, more than the 500`},
		{"refund of an authorisation never captured",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, true)},
			[]fakes.Op{op(fakes.OpRefund, "re_1", "rf-1", "ch_1", "o1", "a", 1, fakes.OpSucceeded)},
			fakes.RefundedBeyondCharge, `more than the 0 charged or captured`},
		{"captured twice",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, true)},
			[]fakes.Op{op(fakes.OpCapture, "ch_1", "cp-1", "ch_1", "o1", "a", 100, fakes.OpSucceeded),
				op(fakes.OpCapture, "ch_1", "cp-2", "ch_1", "o1", "b", 100, fakes.OpSucceeded)},
			fakes.CapturedTwice, `authorisation ch_1 captured 2 times`},
		{"captured beyond the authorisation",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, true)},
			[]fakes.Op{op(fakes.OpCapture, "ch_1", "cp-1", "ch_1", "o1", "a", 1001, fakes.OpSucceeded)},
			fakes.CapturedBeyondAuthorization, `captured 1001, more than the 1000 authorised`},
		{"captured and cancelled",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, true)},
			[]fakes.Op{op(fakes.OpCapture, "ch_1", "cp-1", "ch_1", "o1", "a", 100, fakes.OpSucceeded),
				op(fakes.OpCancel, "ch_1", "cn-1", "ch_1", "o1", "b", 1000, fakes.OpSucceeded)},
			fakes.CapturedAndCanceled, `both captured and cancelled`},
		{"capture of a captured charge",
			[]fakes.Charge{charge("ch_1", "o1", "k1", 1000, false)},
			[]fakes.Op{op(fakes.OpCapture, "ch_1", "cp-1", "ch_1", "o1", "a", 100, fakes.OpSucceeded)},
			fakes.CapturedNonAuthorization, `captured or cancelled, but it was captured when charged`},
		{"operations on a charge never made", nil,
			[]fakes.Op{op(fakes.OpRefund, "re_1", "rf-1", "ch_x", "o1", "a", 100, fakes.OpSucceeded)},
			fakes.UnknownCharge, `1 operations on ch_x, which was never charged`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fakes.Check(tc.charges, tc.ops)
			var me *fakes.MoneyError
			if !errors.As(err, &me) || !me.Has(tc.want) {
				t.Fatalf("Check = %v, want a %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("message %q does not say %q", err, tc.says)
			}
		})
	}
}

// A key resent after its retention charges one intent twice: reported
// once, by intent, not again by key.
func TestCheckReportsOnce(t *testing.T) {
	err := fakes.Check([]fakes.Charge{charge("ch_1", "o1", "k1", 1, false), charge("ch_2", "o1", "k1", 1, false)}, nil)
	var me *fakes.MoneyError
	if !errors.As(err, &me) || len(me.Violations) != 1 {
		t.Fatalf("Check = %v", err)
	}
	if v := me.Violations[0]; v.Kind != fakes.ChargedTwice || len(v.IDs) != 2 || v.IDs[1] != "ch_2" {
		t.Errorf("violation %+v", v)
	}
}
