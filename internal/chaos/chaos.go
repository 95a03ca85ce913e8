// Package chaos runs a provider adapter against a fault-injecting server
// and checks the promises idempay makes whatever the faults: never two
// charges for an intent, one key per intent over every attempt, no outcome
// reported as failed when money may have moved, every unknown settled by a
// second pass, and Replayed true exactly when the server said so.
//
// Pending is its own outcome, never a success: a charge that waits for the
// customer (3-D Secure, a hosted payment page) must come back with an error
// matching idempay.ErrPending, OutcomePending and the pending *Charge, and
// only from a provider the run says answers so (Config.Pending). A nil
// error with a pending charge is reported as the false success it is.
//
// Each adapter's test supplies a Server view over its fake provider and a
// Charge function; the same Run checks them all.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// Server is what the run needs to see of the fake provider.
type Server interface {
	// Charges is the number of real charges made for an intent.
	Charges(intent string) int
	// Keys lists the distinct idempotency keys received for an intent.
	Keys(intent string) []string
	// LastReplayed says whether the last answered charge response for the
	// intent carried the replay header (ok false when none was answered).
	LastReplayed(intent string) (replayed, ok bool)
	// Faults turns fault injection on or off.
	Faults(on bool)
}

// Config is one chaos run.
type Config struct {
	Intents int // how many intents
	Workers int // how many concurrent callers
	Server  Server
	// Intent names intent i; Charge charges it.
	Intent func(i int) string
	Charge func(ctx context.Context, i int) (*idempay.Charge, error)
	// CheckReplayed enables the Replayed-versus-header check, for
	// providers that send a replay header.
	CheckReplayed bool
	// Pending says the provider's charges in this run may be pending (a
	// 2C2P payment token is, always): a pending outcome is then a settled
	// answer, neither success nor unknown. Without it a pending outcome is
	// an error.
	Pending bool
	// ServerLease is how long the fake keeps a key in progress after a
	// request under it began. The second pass starts once it has run out
	// since the first pass ended, so that it meets a healthy server and
	// not the first pass's leases (a 409 there, resent until the attempts
	// or the retry budget ran out, left intents unknown on a fast machine
	// and not on a slow one).
	ServerLease time.Duration
}

// waitOutLeases waits until every key lease the fake granted during a pass
// that has ended has run out. It waits on the fake's own clock (real time):
// a busy machine only makes the wait longer, never too short.
func waitOutLeases(lease time.Duration) {
	if lease > 0 {
		time.Sleep(lease + lease/2)
	}
}

// Report is what a run saw, for the test's verbose output.
type Report struct {
	Intents      int
	Requests     int64 // requests counted by the client over both passes
	Succeeded    int   // after the first pass
	Pending      int   // after the first pass: accepted, money not moved yet
	Unknown      int   // after the first pass
	Settled      int   // unknowns settled (succeeded or pending) by the second pass
	ReplayedSeen int   // results marked replayed by the server
}

// String is the report on one line, for t.Logf.
func (r Report) String() string {
	return fmt.Sprintf("intents=%d attempts=%d succeeded=%d pending=%d unknown=%d settled_on_second_pass=%d replayed=%d",
		r.Intents, r.Requests, r.Succeeded, r.Pending, r.Unknown, r.Settled, r.ReplayedSeen)
}

// Run charges every intent with faults on, then the unknown ones again with
// faults off, and checks every promise. Failures are reported on t.
func Run(t testing.TB, cfg Config) Report {
	t.Helper()
	rep := Report{Intents: cfg.Intents}
	cfg.Server.Faults(true)
	first := pass(t, cfg, allIntents(cfg.Intents), &rep)
	unknown := first.by[idempay.OutcomeUnknown]
	rep.Unknown = len(unknown)
	rep.Succeeded = len(first.by[idempay.OutcomeSucceeded])
	rep.Pending = len(first.by[idempay.OutcomePending])

	cfg.Server.Faults(false)
	waitOutLeases(cfg.ServerLease)
	second := pass(t, cfg, unknown, &rep)
	left := second.by[idempay.OutcomeUnknown]
	rep.Settled = rep.Unknown - len(left)
	if len(left) > 0 {
		t.Errorf("chaos: %d intents still unknown after the second pass, e.g. %s: %v", len(left), cfg.Intent(left[0]), second.errs[left[0]])
	}
	for i := range cfg.Intents {
		id := cfg.Intent(i)
		if n := cfg.Server.Charges(id); n != 1 {
			t.Errorf("chaos: intent %s charged %d times, want exactly 1", id, n)
		}
		if keys := cfg.Server.Keys(id); len(keys) != 1 {
			t.Errorf("chaos: intent %s sent with %d distinct keys %v, want 1", id, len(keys), keys)
		}
	}
	return rep
}

func allIntents(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// passResult is a pass's intents by outcome, and the error of each that
// ended unknown.
type passResult struct {
	by   map[idempay.Outcome][]int
	errs map[int]error
}

// pass charges the given intents concurrently and returns them by
// outcome. Any failed outcome is an error: with only the faults injected
// here, no attempt can prove that no money moved.
func pass(t testing.TB, cfg Config, intents []int, rep *Report) passResult {
	var (
		mu    sync.Mutex
		ended = passResult{by: map[idempay.Outcome][]int{}, errs: map[int]error{}}
		next  atomic.Int64
		wg    sync.WaitGroup
	)
	for range max(cfg.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1)) - 1
				if n >= len(intents) {
					return
				}
				i := intents[n]
				ch, err := cfg.Charge(context.Background(), i)
				attempts, o := check(t, cfg, i, ch, err)
				mu.Lock()
				rep.Requests += int64(attempts)
				ended.by[o] = append(ended.by[o], i)
				if o == idempay.OutcomeUnknown {
					ended.errs[i] = err
				}
				if o != idempay.OutcomeUnknown && ch != nil && ch.ReplayedFrom == idempay.ReplayFromServer {
					rep.ReplayedSeen++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ended
}

// check verifies one Charge result and says what its outcome is: unknown,
// succeeded or, when the run allows it, pending. A failed outcome, or a
// pending one the run does not allow, is reported and counted as unknown,
// so that the second pass tries the intent again.
func check(t testing.TB, cfg Config, i int, ch *idempay.Charge, err error) (attempts int, o idempay.Outcome) {
	id := cfg.Intent(i)
	o = idempay.OutcomeOf(err)
	var ce *idempay.ChargeError
	if errors.As(err, &ce) {
		attempts = ce.Requests
	}
	switch {
	case o == idempay.OutcomeUnknown:
		return attempts, o
	case o == idempay.OutcomePending && cfg.Pending:
		if !checkPending(t, id, ch, err) {
			return attempts, idempay.OutcomeUnknown
		}
	case o != idempay.OutcomeSucceeded:
		want := "succeeded or unknown"
		if cfg.Pending {
			want = "succeeded, pending or unknown"
		}
		t.Errorf("chaos: intent %s ended %s (%v); only %s are possible here", id, o, err, want)
		return attempts, idempay.OutcomeUnknown
	case ch == nil:
		t.Errorf("chaos: intent %s succeeded without a charge", id)
		return attempts, idempay.OutcomeUnknown
	case ch.State != idempay.StateSucceeded:
		// A nil error is a success: a charge that is not one is what a
		// caller who checks only err would ship unpaid.
		t.Errorf("chaos: intent %s returned a nil error with a %s charge: pending reported as success", id, ch.State)
		return ch.Requests, idempay.OutcomeUnknown
	}
	if ce == nil {
		attempts = ch.Requests
	}
	if ch.IntentID != id {
		t.Errorf("chaos: charge for %s came back as %s", id, ch.IntentID)
	}
	if cfg.CheckReplayed && ch.ReplayedFrom != idempay.ReplayFromStore {
		header, ok := cfg.Server.LastReplayed(id)
		fromServer := ch.ReplayedFrom == idempay.ReplayFromServer
		if !ok || header != fromServer {
			t.Errorf("chaos: intent %s: Replayed from server %v, but the server's last answer had the replay header %v", id, fromServer, header)
		}
	}
	return attempts, o
}

// checkPending verifies a pending answer: the typed error and the pending
// charge the customer must be shown, together.
func checkPending(t testing.TB, id string, ch *idempay.Charge, err error) bool {
	switch {
	case !errors.Is(err, idempay.ErrPending):
		t.Errorf("chaos: intent %s: outcome pending without ErrPending in the chain (%v)", id, err)
	case ch == nil:
		t.Errorf("chaos: intent %s: pending without the pending charge (%v)", id, err)
	case ch.State != idempay.StatePending:
		t.Errorf("chaos: intent %s: outcome pending with a %s charge", id, ch.State)
	default:
		return true
	}
	return false
}
