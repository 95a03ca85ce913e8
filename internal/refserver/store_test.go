package refserver

import (
	"testing"
	"time"
)

// TestCommitIsFenced: once a claim's lease has been taken over, its holder
// can neither charge nor store nor release.
func TestCommitIsFenced(t *testing.T) {
	ledger := &Ledger{}
	ks := newKeyStore(time.Second, time.Hour, ledger)
	sc, now := scope{"m", "k"}, time.Now()
	old := ks.claim(sc, "fp", now)
	if old.kind != claimWon || old.reclaimed {
		t.Fatalf("first claim: %+v", old)
	}
	if c := ks.claim(sc, "fp", now.Add(999*time.Millisecond)); c.kind != claimInUse {
		t.Fatalf("claim within the lease: %+v", c)
	}
	taker := ks.claim(sc, "fp", now.Add(time.Second))
	if taker.kind != claimWon || !taker.reclaimed || taker.token == old.token {
		t.Fatalf("claim after the lease: %+v", taker)
	}
	charge := &Charge{OrderID: "o", Key: "k"}
	if ks.commit(sc, old.token, stored{201, []byte("old")}, charge) {
		t.Fatal("the fenced-off holder committed")
	}
	ks.release(sc, old.token)
	if ledger.Len() != 0 || ks.records[sc] == nil {
		t.Fatal("the fenced-off holder charged or released")
	}
	if !ks.commit(sc, taker.token, stored{201, []byte("new")}, charge) || ledger.Len() != 1 {
		t.Fatal("the current holder could not commit")
	}
	if ks.commit(sc, taker.token, stored{201, []byte("again")}, charge) || ledger.Len() != 1 {
		t.Fatal("a claim committed twice")
	}
	if c := ks.claim(sc, "fp", now.Add(time.Minute)); c.kind != claimReplay || string(c.resp.body) != "new" {
		t.Fatalf("after commit: %+v", c)
	}
	if c := ks.claim(sc, "other", now.Add(time.Minute)); c.kind != claimMismatch {
		t.Fatalf("other fingerprint: %+v", c)
	}
}
