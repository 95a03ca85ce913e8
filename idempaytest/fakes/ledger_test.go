package fakes_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// TestLedgerReads: Find is scoped by merchant, Charges returns a copy,
// Count, OpCount and Refunded sum what they say.
func TestLedgerReads(t *testing.T) {
	var l fakes.Ledger // the zero value is usable
	if l.Check() != nil || l.Len() != 0 {
		t.Fatal("empty ledger not clean")
	}
	l.Add(fakes.Charge{Merchant: "a", Intent: "o1", Key: "k1", ID: "ch_1", Amount: 1000})
	l.Add(fakes.Charge{Merchant: "b", Intent: "o1", Key: "k1", ID: "ch_2", Amount: 1000})
	if l.Count("o1") != 2 || l.Count("o2") != 0 || l.Len() != 2 {
		t.Error("Count or Len wrong")
	}
	if c, ok := l.Find("b", "o1"); !ok || c.ID != "ch_2" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
	if _, ok := l.Find("b", "o2"); ok {
		t.Error("Find crossed intents")
	}
	got := l.Charges()
	got[0].ID = "changed"
	if l.Charges()[0].ID != "ch_1" {
		t.Error("Charges shares its slice with the ledger")
	}
	refund(&l, "a", "ch_1", "rf-1", 300)
	refund(&l, "a", "ch_1", "rf-2", 200)
	if l.OpCount("rf-1") != 1 || l.Refunded("o1") != 500 || len(l.Ops()) != 2 {
		t.Errorf("OpCount %d, Refunded %d", l.OpCount("rf-1"), l.Refunded("o1"))
	}
	if !l.SetStatus("a", "re-rf-2", fakes.OpFailed) || l.Refunded("o1") != 300 {
		t.Errorf("a failed refund still counts: %d", l.Refunded("o1"))
	}
	if l.SetStatus("b", "re-rf-1", fakes.OpFailed) {
		t.Error("SetStatus crossed merchants")
	}
	if b, ok := l.Balance("a", "ch_1"); !ok || b.Refundable() != 700 || b.Captured != 1000 {
		t.Errorf("Balance = %+v, %v", b, ok)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	l.Add(fakes.Charge{Merchant: "a", Intent: "o1", Key: "k2", ID: "ch_3"})
	var me *fakes.MoneyError
	if err := l.Check(); !errors.As(err, &me) || !me.Has(fakes.ChargedTwice) {
		t.Fatalf("Check = %v", err)
	}
}

// refund enters a refund of amount, if the books allow it.
func refund(l *fakes.Ledger, merchant, chargeID, opID string, amount int64) bool {
	done := false
	l.Decide(merchant, chargeID, func(b fakes.Balance, found bool, record func(fakes.Op)) {
		if !found || b.Problem(fakes.OpRefund, amount) != fakes.NoProblem {
			return
		}
		record(fakes.Op{Type: fakes.OpRefund, ID: "re-" + opID, OpID: opID, ChargeID: chargeID, Merchant: merchant,
			Intent: b.Charge.Intent, Amount: amount})
		done = true
	})
	return done
}

// Many refunds of one charge decided at once never add up past it: each
// decision sees the ones made before it.
func TestLedgerDecideSerializes(t *testing.T) {
	var l fakes.Ledger
	l.Add(fakes.Charge{Merchant: "m", Intent: "o", ID: "ch", Amount: 1000})
	var ok atomic.Int32
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			if refund(&l, "m", "ch", string(rune('a'+i%26))+string(rune('a'+i/26)), 100) {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 10 || l.Refunded("o") != 1000 {
		t.Fatalf("%d refunds of 100 went through, %d refunded", ok.Load(), l.Refunded("o"))
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}

// The rules providers share, one by one.
func TestBalanceProblem(t *testing.T) {
	auth := fakes.Charge{Amount: 1000, Authorized: true}
	paid := fakes.Charge{Amount: 1000}
	for _, tc := range []struct {
		name string
		b    fakes.Balance
		t    fakes.OpType
		amt  int64
		want fakes.Problem
	}{
		{"refund within", fakes.Balance{Charge: paid, Captured: 1000, Refunded: 400}, fakes.OpRefund, 600, fakes.NoProblem},
		{"refund beyond", fakes.Balance{Charge: paid, Captured: 1000, Refunded: 400}, fakes.OpRefund, 601, fakes.RefundExceeds},
		{"refund of an uncaptured authorisation", fakes.Balance{Charge: auth}, fakes.OpRefund, 1, fakes.NotCaptured},
		{"refund of a cancelled authorisation", fakes.Balance{Charge: auth, Cancels: 1}, fakes.OpRefund, 1, fakes.Cancelled},
		{"refund of a capture", fakes.Balance{Charge: auth, Captured: 500, Captures: 1}, fakes.OpRefund, 500, fakes.NoProblem},
		{"refund beyond a capture", fakes.Balance{Charge: auth, Captured: 500, Captures: 1}, fakes.OpRefund, 501, fakes.RefundExceeds},
		{"capture in part", fakes.Balance{Charge: auth}, fakes.OpCapture, 999, fakes.NoProblem},
		{"capture beyond", fakes.Balance{Charge: auth}, fakes.OpCapture, 1001, fakes.CaptureExceeds},
		{"capture twice", fakes.Balance{Charge: auth, Captured: 10, Captures: 1}, fakes.OpCapture, 10, fakes.AuthorizationClosed},
		{"capture after a cancel", fakes.Balance{Charge: auth, Cancels: 1}, fakes.OpCapture, 10, fakes.AuthorizationClosed},
		{"cancel after a capture", fakes.Balance{Charge: auth, Captured: 10, Captures: 1}, fakes.OpCancel, 0, fakes.AuthorizationClosed},
		{"capture of a paid charge", fakes.Balance{Charge: paid, Captured: 1000}, fakes.OpCapture, 10, fakes.NotAuthorization},
		{"cancel of a paid charge", fakes.Balance{Charge: paid, Captured: 1000}, fakes.OpCancel, 0, fakes.NotAuthorization},
		{"cancel", fakes.Balance{Charge: auth}, fakes.OpCancel, 0, fakes.NoProblem},
	} {
		if got := tc.b.Problem(tc.t, tc.amt); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
