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
