package refserver

import (
	"errors"
	"strings"
	"testing"
)

func TestLedger(t *testing.T) {
	var l Ledger // the zero value is usable
	if l.Check() != nil || l.Len() != 0 {
		t.Fatal("empty ledger not clean")
	}
	l.add(Charge{Merchant: "a", OrderID: "o1", Key: "k1", ChargeID: "ch_1"})
	l.add(Charge{Merchant: "b", OrderID: "o1", Key: "k1", ChargeID: "ch_2"})
	l.add(Charge{Merchant: "a", OrderID: "o2", Key: "k2", ChargeID: "ch_3"})
	if err := l.Check(); err != nil {
		t.Fatalf("one charge per merchant and order reported: %v", err)
	}
	if l.Count("o1") != 2 || l.Count("o2") != 1 || l.Count("o3") != 0 {
		t.Error("Count wrong")
	}
	if c, ok := l.Find("b", "o1"); !ok || c.ChargeID != "ch_2" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
	if _, ok := l.Find("b", "o2"); ok {
		t.Error("Find crossed merchants")
	}
	got := l.Charges()
	got[0].ChargeID = "changed"
	if l.Charges()[0].ChargeID != "ch_1" {
		t.Error("Charges shares its slice with the ledger")
	}

	l.add(Charge{Merchant: "a", OrderID: "o2", Key: "k2-retry", ChargeID: "ch_4"})
	var dup *DuplicateChargeError
	err := l.Check()
	if !errors.As(err, &dup) || len(dup.Duplicates) != 1 {
		t.Fatalf("Check = %v", err)
	}
	d := dup.Duplicates[0]
	if d.Merchant != "a" || d.OrderID != "o2" || len(d.Charges) != 2 || d.Charges[1].ChargeID != "ch_4" {
		t.Errorf("duplicate = %+v", d)
	}
	if msg := err.Error(); !strings.Contains(msg, `"o2"`) || !strings.Contains(msg, "k2-retry") {
		t.Errorf("message %q names neither the order nor the keys", msg)
	}
}
