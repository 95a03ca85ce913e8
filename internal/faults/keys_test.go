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

// TestKeyTableFenced: once a claim's lease has been taken over, its
// holder can neither charge nor store nor release, and a claim commits
// once.
func TestKeyTableFenced(t *testing.T) {
	kt := NewKeyTable(time.Second, time.Hour)
	now := time.Now()
	old := kt.Claim("m", "k", "fp", now)
	if old.Kind != ClaimWon || old.Reclaimed {
		t.Fatalf("first claim: %+v", old)
	}
	if c := kt.Claim("m", "k", "fp", now.Add(999*time.Millisecond)); c.Kind != ClaimInUse {
		t.Fatalf("claim within the lease: %+v", c)
	}
	taker := kt.Claim("m", "k", "fp", now.Add(time.Second))
	if taker.Kind != ClaimWon || !taker.Reclaimed || taker.Token == old.Token {
		t.Fatalf("claim after the lease: %+v", taker)
	}
	charges := 0
	charge := func() { charges++ }
	if kt.Commit("m", "k", old.Token, Stored{201, []byte("old")}, charge) {
		t.Fatal("the fenced-off holder committed")
	}
	kt.Release("m", "k", old.Token)
	if charges != 0 || !kt.InFlight("m", "k") {
		t.Fatal("the fenced-off holder charged or released")
	}
	if !kt.Commit("m", "k", taker.Token, Stored{201, []byte("new")}, charge) || charges != 1 {
		t.Fatal("the current holder could not commit")
	}
	if kt.InFlight("m", "k") {
		t.Fatal("a committed key is still in flight")
	}
	if kt.Commit("m", "k", taker.Token, Stored{201, []byte("again")}, charge) || charges != 1 {
		t.Fatal("a claim committed twice")
	}
	if c := kt.Claim("m", "k", "fp", now.Add(time.Minute)); c.Kind != ClaimReplay || string(c.Resp.Body) != "new" {
		t.Fatalf("after commit: %+v", c)
	}
	if c := kt.Claim("m", "k", "other", now.Add(time.Minute)); c.Kind != ClaimMismatch {
		t.Fatalf("other fingerprint: %+v", c)
	}
}

// TestKeyTableSweep: keys past retention are dropped from memory even if
// never asked for again.
func TestKeyTableSweep(t *testing.T) {
	start := time.Now()
	kt := NewKeyTable(time.Minute, time.Hour)
	kt.Claim("", "old", "fp", start)
	later := start.Add(time.Hour)
	for i := range sweepEvery {
		kt.Claim("", string(rune('a'+i%26)), "fp", later)
	}
	if _, ok := kt.records[keyScope{"", "old"}]; ok {
		t.Error("an expired key survived a sweep")
	}
}

// Of many concurrent claims on one key, exactly one wins, round after
// round: the claim itself is atomic, with no HTTP and no latency to help.
func TestKeyTableOneWinner(t *testing.T) {
	for round := range 20 {
		kt := NewKeyTable(time.Hour, time.Hour)
		now := time.Now()
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				if kt.Claim("a", "k", "fp", now).Kind == ClaimWon {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, won.Load())
		}
	}
}
