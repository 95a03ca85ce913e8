// Package chaos runs a provider adapter against a fault-injecting server
// and checks the promises idempay makes whatever the faults: never two
// charges for an intent, one key per intent over every attempt, no outcome
// reported as failed when money may have moved, every unknown settled by a
// second pass, and Replayed true exactly when the server said so.
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
}

// Report is what a run saw, for the test's verbose output.
type Report struct {
	Intents      int
	Attempts     int64 // requests counted by the client over both passes
	Succeeded    int   // after the first pass
	Unknown      int   // after the first pass
	Settled      int   // unknowns settled by the second pass
	ReplayedSeen int   // results marked replayed by the server
}

// String is the report on one line, for t.Logf.
func (r Report) String() string {
	return fmt.Sprintf("intents=%d attempts=%d succeeded=%d unknown=%d settled_on_second_pass=%d replayed=%d",
		r.Intents, r.Attempts, r.Succeeded, r.Unknown, r.Settled, r.ReplayedSeen)
}

// Run charges every intent with faults on, then the unknown ones again with
// faults off, and checks every promise. Failures are reported on t.
func Run(t testing.TB, cfg Config) Report {
	t.Helper()
	rep := Report{Intents: cfg.Intents}
	cfg.Server.Faults(true)
	unknown := pass(t, cfg, allIntents(cfg.Intents), &rep)
	rep.Unknown = len(unknown)
	rep.Succeeded = cfg.Intents - rep.Unknown

	cfg.Server.Faults(false)
	left := pass(t, cfg, unknown, &rep)
	rep.Settled = rep.Unknown - len(left)
	if len(left) > 0 {
		t.Errorf("chaos: %d intents still unknown after the second pass, e.g. %s", len(left), cfg.Intent(left[0]))
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

// pass charges the given intents concurrently and returns those whose
// outcome is unknown. Any failed outcome is an error: with only the
// faults injected here, no attempt can prove that no money moved.
func pass(t testing.TB, cfg Config, intents []int, rep *Report) []int {
	var (
		mu      sync.Mutex
		unknown []int
		next    atomic.Int64
		wg      sync.WaitGroup
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
				attempts, isUnknown := check(t, cfg, i, ch, err)
				mu.Lock()
				rep.Attempts += int64(attempts)
				if isUnknown {
					unknown = append(unknown, i)
				} else if ch.ReplayedFrom == idempay.ReplayFromServer {
					rep.ReplayedSeen++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return unknown
}

// check verifies one Charge result and says whether it is unknown.
func check(t testing.TB, cfg Config, i int, ch *idempay.Charge, err error) (attempts int, unknown bool) {
	id := cfg.Intent(i)
	if err != nil {
		var ce *idempay.ChargeError
		if errors.As(err, &ce) {
			attempts = ce.Attempts
		}
		if o := idempay.OutcomeOf(err); o != idempay.OutcomeUnknown {
			t.Errorf("chaos: intent %s ended %s (%v); only succeeded or unknown are possible here", id, o, err)
		}
		return attempts, true
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
	return ch.Attempts, false
}
