package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// racers is how many goroutines race for one intent: enough to make a
// check-then-insert store lose on a 2-core machine, few enough to stay fast
// on a store that pays an fsync per write.
const racers = 32

// together runs f(0) ... f(n-1) in n goroutines released at the same moment,
// so that they collide inside the store rather than queue at its door.
func together(n int, f func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			<-start
			f(i)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
}

func concurrencyCases() []testCase {
	return []testCase{{
		name: "Concurrency/racing Reserves of one intent create it once",
		rule: fmt.Sprintf("When %d callers Reserve the same intent at once with different keys, exactly one gets Created and the lease, and all of them get that caller's key", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			got := make([]idempay.Reservation, racers)
			errs := make([]error, racers)
			together(racers, func(i int) {
				r := newRecord("ns", "order-1", fmt.Sprintf("key-%02d", i), fmt.Sprintf("owner-%02d", i), t0)
				got[i], errs[i] = s.Reserve(t.Context(), r)
			})
			var creators []int
			claimed := 0
			for i, g := range got {
				if errs[i] != nil {
					t.Fatalf("Reserve by caller %d = %v; want no error", i, errs[i])
				}
				if g.Created {
					creators = append(creators, i)
				}
				if g.Claimed {
					claimed++
				}
			}
			switch {
			case len(creators) == 0:
				t.Fatal("no caller got Created: the intent had no record, so one insert must have won")
			case len(creators) > 1:
				t.Errorf("%d callers got Created (callers %v): several keys issued for one intent, a double charge", len(creators), creators)
			}
			if claimed != 1 {
				t.Errorf("%d callers got Claimed; want 1: the creator's lease was still running for all the others", claimed)
			}
			// The stored key is the reference: with several creators
			// there is no single "creator's key" to compare with.
			stored := load(t, s, "ns", "order-1").Key
			if want := fmt.Sprintf("key-%02d", creators[0]); len(creators) == 1 && stored != want {
				t.Errorf("stored key = %q; want %q, the key of the caller that created the record", stored, want)
			}
			var odd []string
			for i, g := range got {
				if g.Record.Key != stored {
					odd = append(odd, fmt.Sprintf("caller %d saw %q", i, g.Record.Key))
				}
			}
			if len(odd) > 0 {
				t.Errorf("%d of %d callers saw a key other than the stored %q: %s", len(odd), racers, stored, strings.Join(odd[:min(len(odd), 3)], ", "))
			}
		},
	}, {
		name: "Concurrency/racing Reserves of distinct intents all create",
		rule: "Concurrent Reserves of different intents do not interfere: each one creates its own record",
		run: func(t *testing.T, s idempay.KeyStore) {
			const perCaller = 4
			together(racers, func(i int) {
				for j := range perCaller {
					id := fmt.Sprintf("order-%02d-%d", i, j)
					got, err := s.Reserve(t.Context(), newRecord("ns", id, "key-"+id, "owner", t0.Add(time.Duration(i*perCaller+j)*us)))
					switch { // t.Errorf is safe from any goroutine
					case err != nil:
						t.Errorf("Reserve(%q) = %v; want no error", id, err)
					case !got.Created || got.Record.Key != "key-"+id:
						t.Errorf("Reserve(%q): Created=%v key %q; want Created and key %q", id, got.Created, got.Record.Key, "key-"+id)
					}
				}
			})
			open, err := s.ListOpen(t.Context(), "ns", 0)
			if err != nil {
				t.Fatalf("ListOpen = %v; want no error", err)
			}
			if len(open) != racers*perCaller {
				t.Errorf("ListOpen returned %d records; want %d, one per intent reserved", len(open), racers*perCaller)
			}
		},
	}, {
		name: "Concurrency/racing Resolves of one record close it once",
		rule: fmt.Sprintf("When %d callers Resolve the same open record to succeeded at once, exactly one succeeds and the others get ErrAlreadyResolved", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			r := reserve(t, s, newRecord("ns", "order-1", "key-1", "owner", t0)).Record
			errs := make([]error, racers)
			together(racers, func(i int) {
				res := resolution(r, idempay.StateSucceeded, t0.Add(time.Duration(i+1)*time.Second))
				res.ProviderRef = fmt.Sprintf("ch_%02d", i)
				errs[i] = s.Resolve(t.Context(), res)
			})
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Errorf("callers %d and %d both resolved the record: the second overwrote a closed outcome", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, idempay.ErrAlreadyResolved):
					t.Errorf("Resolve by caller %d = %v; want nil or ErrAlreadyResolved", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no Resolve succeeded; want exactly one")
			}
			if got := load(t, s, "ns", "order-1"); got.ProviderRef != fmt.Sprintf("ch_%02d", winner) {
				t.Errorf("stored ProviderRef = %q; want %q, written by the one Resolve that succeeded", got.ProviderRef, fmt.Sprintf("ch_%02d", winner))
			}
		},
	}, {
		name: "Concurrency/a release racing a takeover never frees the new holder's lease",
		rule: fmt.Sprintf("For each of %d intents whose lease by owner-a has run out, owner-a's release (LeaseOwner owner-a) and owner-b's claim race; whichever lands first, owner-b ends up holding the lease: the owner check and the write are one atomic step", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			recs := make([]idempay.Record, racers)
			for i := range recs {
				recs[i] = reserve(t, s, newRecord("ns", fmt.Sprintf("order-%02d", i), "key-a", "owner-a", t0)).Record
			}
			together(2*racers, func(i int) {
				r := recs[i/2]
				if i%2 == 0 {
					res := resolution(r, idempay.StateOpen, r.LeaseUntil.Add(time.Second))
					res.LeaseOwner = "owner-a"
					if err := s.Resolve(t.Context(), res); err != nil && !errors.Is(err, idempay.ErrLeaseLost) {
						t.Errorf("release of %s by owner-a = %v; want nil or ErrLeaseLost", r.IntentID, err)
					}
					return
				}
				got, err := s.Reserve(t.Context(), newRecord("ns", r.IntentID, "key-b", "owner-b", r.LeaseUntil))
				switch {
				case err != nil:
					t.Errorf("Reserve of %s by owner-b = %v; want no error", r.IntentID, err)
				case !got.Claimed:
					t.Errorf("Reserve of %s by owner-b at owner-a's LeaseUntil: Claimed = false; want true (released or run out, the lease was free)", r.IntentID)
				}
			})
			var freed []string
			for _, r := range recs {
				if got := load(t, s, "ns", r.IntentID); got.LeaseOwner != "owner-b" {
					freed = append(freed, fmt.Sprintf("%s (owner %q)", r.IntentID, got.LeaseOwner))
				}
			}
			if len(freed) > 0 {
				t.Errorf("%d of %d intents lost owner-b's lease to owner-a's late release: %s", len(freed), racers, strings.Join(freed[:min(len(freed), 3)], ", "))
			}
		},
	}}
}
