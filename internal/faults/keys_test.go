package faults

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyTableLifecycle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kt := NewKeyTable(time.Second, 24*time.Hour)
	c := kt.Claim("acct", "k", "fp", t0)
	if c.Kind != ClaimWon {
		t.Fatalf("first claim: %v", c.Kind)
	}
	if got := kt.Claim("acct", "k", "fp", t0).Kind; got != ClaimInUse {
		t.Fatalf("while leased: %v", got)
	}
	if got := kt.Claim("acct", "k", "other", t0).Kind; got != ClaimMismatch {
		t.Fatalf("other fingerprint: %v", got)
	}
	if got := kt.Claim("acct2", "k", "other", t0).Kind; got != ClaimWon {
		t.Fatalf("another account's key space: %v", got)
	}
	// The lease runs out: a new claim takes over and fences the old one.
	late := kt.Claim("acct", "k", "fp", t0.Add(2*time.Second))
	if late.Kind != ClaimWon {
		t.Fatalf("after the lease: %v", late.Kind)
	}
	if kt.Commit("acct", "k", c.Token, Stored{Status: 200}, func() { t.Error("fenced effect ran") }) {
		t.Fatal("a taken-over claim committed")
	}
	ran := false
	if !kt.Commit("acct", "k", late.Token, Stored{Status: 201, Body: []byte("x")}, func() { ran = true }) || !ran {
		t.Fatal("the current claim could not commit")
	}
	if r := kt.Claim("acct", "k", "fp", t0.Add(time.Hour)); r.Kind != ClaimReplay || r.Resp.Status != 201 {
		t.Fatalf("after commit: %+v", r)
	}
	if r := kt.Claim("acct", "k", "fp", t0.Add(24*time.Hour)); r.Kind != ClaimWon {
		t.Fatalf("past retention the key is forgotten: %+v", r)
	}
}

func TestKeyTableRelease(t *testing.T) {
	t0 := time.Now()
	kt := NewKeyTable(time.Hour, time.Hour)
	c := kt.Claim("a", "k", "fp", t0)
	kt.Release("a", "k", c.Token+1) // not the claim: ignored
	if got := kt.Claim("a", "k", "fp", t0).Kind; got != ClaimInUse {
		t.Fatalf("wrong token released the key: %v", got)
	}
	kt.Release("a", "k", c.Token)
	if got := kt.Claim("a", "k", "other", t0).Kind; got != ClaimWon {
		t.Fatalf("released key: %v", got)
	}
}

// Of many concurrent claims on one key, exactly one wins.
func TestKeyTableOneWinner(t *testing.T) {
	kt := NewKeyTable(time.Hour, time.Hour)
	now := time.Now()
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kt.Claim("a", "k", "fp", now).Kind == ClaimWon {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d winners", won.Load())
	}
}
