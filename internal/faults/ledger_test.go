package faults

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestLedgerCheck(t *testing.T) {
	var l Ledger
	if err := l.Check(); err != nil {
		t.Fatalf("empty ledger: %v", err)
	}
	var wg sync.WaitGroup
	for _, c := range []Charge{
		{Merchant: "m1", Intent: "a", Key: "k1"},
		{Merchant: "m2", Intent: "a", Key: "k2"}, // same intent, other merchant: fine
		{Merchant: "m1", Intent: "b", Key: "k3"},
		{Merchant: "m1", Intent: "b", Key: "k4"},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); l.Add(c) }()
	}
	wg.Wait()
	if l.Len() != 4 || l.Count("a") != 2 || l.Count("b") != 2 {
		t.Fatalf("len %d, count a %d, b %d", l.Len(), l.Count("a"), l.Count("b"))
	}
	err := l.Check()
	var dup *DuplicateError
	if !errors.As(err, &dup) || len(dup.Duplicates) != 1 || dup.Duplicates[0][0].Intent != "b" {
		t.Fatalf("Check() = %v, want one duplicate for b", err)
	}
	if !strings.Contains(err.Error(), `"b" (merchant "m1") 2 times`) {
		t.Errorf("message: %v", err)
	}
}

// TestLedgerFind: Find is scoped by merchant, Charges returns a copy, and
// Check reports an intent charged twice under one merchant with its keys.
func TestLedgerFind(t *testing.T) {
	var l Ledger // the zero value is usable
	if l.Check() != nil || l.Len() != 0 {
		t.Fatal("empty ledger not clean")
	}
	l.Add(Charge{Merchant: "a", Intent: "o1", Key: "k1", ID: "ch_1"})
	l.Add(Charge{Merchant: "b", Intent: "o1", Key: "k1", ID: "ch_2"})
	l.Add(Charge{Merchant: "a", Intent: "o2", Key: "k2", ID: "ch_3"})
	if err := l.Check(); err != nil {
		t.Fatalf("one charge per merchant and order reported: %v", err)
	}
	if l.Count("o1") != 2 || l.Count("o2") != 1 || l.Count("o3") != 0 {
		t.Error("Count wrong")
	}
	if c, ok := l.Find("b", "o1"); !ok || c.ID != "ch_2" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
	if _, ok := l.Find("b", "o2"); ok {
		t.Error("Find crossed merchants")
	}
	got := l.Charges()
	got[0].ID = "changed"
	if l.Charges()[0].ID != "ch_1" {
		t.Error("Charges shares its slice with the ledger")
	}

	l.Add(Charge{Merchant: "a", Intent: "o2", Key: "k2-retry", ID: "ch_4"})
	var dup *DuplicateError
	err := l.Check()
	if !errors.As(err, &dup) || len(dup.Duplicates) != 1 {
		t.Fatalf("Check = %v", err)
	}
	d := dup.Duplicates[0]
	if d[0].Merchant != "a" || d[0].Intent != "o2" || len(d) != 2 || d[1].ID != "ch_4" {
		t.Errorf("duplicate = %+v", d)
	}
	if msg := err.Error(); !strings.Contains(msg, `"o2"`) || !strings.Contains(msg, "k2-retry") {
		t.Errorf("message %q names neither the order nor the keys", msg)
	}
}
