package refserver

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestConcurrentSameKey: of 50 simultaneous requests with one key, exactly
// one charges; every other gets 409 or the replay of that charge.
func TestConcurrentSameKey(t *testing.T) {
	// The latency keeps the winner in flight while the others arrive.
	s, ts := newTest(t, Config{Latency: 50 * time.Millisecond})
	const n = 50
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = post(t, ts.Client(), ts.URL, "same", body("ord_1", 1500, "tok_visa"))
		})
	}
	close(start)
	wg.Wait()

	mustCharges(t, s, 1)
	chargeID := s.Ledger().Charges()[0].ID
	fresh, conflicts := 0, 0
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("request failed: %v", r.err)
		case r.status == http.StatusCreated && !r.replayed():
			fresh++
		case r.status == http.StatusCreated:
			if got := r.charge(t).ChargeID; got != chargeID {
				t.Errorf("replay of charge %s, want %s", got, chargeID)
			}
		case r.status == http.StatusConflict:
			if r.apiError(t).Code != "idempotency_key_in_use" {
				t.Errorf("409 body %s", r.body)
			}
			conflicts++
		default:
			t.Errorf("unexpected status %d: %s", r.status, r.body)
		}
	}
	if fresh != 1 || conflicts == 0 {
		t.Errorf("%d fresh charges and %d conflicts; want 1 and some", fresh, conflicts)
	}
	if err := s.Ledger().Check(); err != nil {
		t.Error(err)
	}
}

// TestConcurrentDistinctKeys: independent intents do not block each other
// and each charges once.
func TestConcurrentDistinctKeys(t *testing.T) {
	s, ts := newTest(t, Config{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			r := post(t, ts.Client(), ts.URL, fmt.Sprint("key-", i), body(fmt.Sprint("ord_", i), 100+i, "tok_visa"))
			if r.err != nil || r.status != http.StatusCreated {
				t.Errorf("intent %d: status %d err %v", i, r.status, r.err)
			}
		})
	}
	wg.Wait()
	mustCharges(t, s, 50)
	if err := s.Ledger().Check(); err != nil {
		t.Error(err)
	}
	if keys := s.Stats().KeysByOrder["ord_7"]; len(keys) != 1 || keys[0] != "key-7" {
		t.Errorf("keys seen for ord_7: %q", keys)
	}
}

// TestTwoKeysForOneOrderIsCaught: a client that makes a new key per
// attempt charges twice, and both the ledger and the counters show it.
func TestTwoKeysForOneOrderIsCaught(t *testing.T) {
	s, ts := newTest(t, Config{})
	mustStatus(t, post(t, ts.Client(), ts.URL, "attempt-1", body("ord_1", 1500, "tok_visa")), 201)
	mustStatus(t, post(t, ts.Client(), ts.URL, "attempt-2", body("ord_1", 1500, "tok_visa")), 201)
	if err := s.Ledger().Check(); err == nil {
		t.Error("Check found no duplicate after two charges of ord_1")
	}
	if keys := s.Stats().KeysByOrder["ord_1"]; len(keys) != 2 {
		t.Errorf("distinct keys for ord_1: %q, want 2", keys)
	}
}
