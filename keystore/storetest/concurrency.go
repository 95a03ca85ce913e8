package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/idempay/idempay"
)

// racers is how many goroutines race for one intent: enough to make a
// check-then-insert store lose on a 2-core machine, few enough to stay fast
// on a store that pays an fsync per write.
const racers = 32

// rounds is how many times a race for one intent is run, one intent after
// another: a race is won by chance, and a loaded machine may let one racer
// through alone now and then.
const rounds = 3

// inRounds runs race once per round, on its own intent, until one fails.
func inRounds(t *testing.T, race func(id string)) {
	t.Helper()
	for round := range rounds {
		if race(fmt.Sprintf("order-%d", round)); t.Failed() {
			return
		}
	}
}

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

// race runs req(i) as Reserve for racers goroutines at once and returns
// their answers; an error stops the case.
func race(t *testing.T, s idempay.KeyStore, req func(i int) idempay.ReserveRequest) []idempay.Reservation {
	t.Helper()
	got := make([]idempay.Reservation, racers)
	errs := make([]error, racers)
	together(racers, func(i int) { got[i], errs[i] = s.Reserve(t.Context(), req(i)) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Reserve by racer %d = %v; want no error", i, err)
		}
	}
	return got
}

// winners returns the racers whose answers pass f.
func winners(got []idempay.Reservation, f func(idempay.Reservation) bool) []int {
	var w []int
	for i, g := range got {
		if f(g) {
			w = append(w, i)
		}
	}
	return w
}

// checkOneKey reports racers that saw a key other than the stored one.
func checkOneKey(t *testing.T, got []idempay.Reservation, stored string) {
	t.Helper()
	var odd []string
	for i, g := range got {
		if g.Record.Key != stored {
			odd = append(odd, fmt.Sprintf("racer %d saw %q", i, g.Record.Key))
		}
	}
	if len(odd) > 0 {
		t.Errorf("%d of %d racers saw a key other than the stored %q: %s", len(odd), len(got), stored, strings.Join(odd[:min(len(odd), 3)], ", "))
	}
}

func concurrencyCases() []testCase {
	return []testCase{{
		name: "Concurrency/racing Reserves of one intent create it once",
		rule: fmt.Sprintf("When %d owners Reserve the same absent intent at once (in each of several rounds), with their own keys and the same parameters, exactly one gets Created and the lease, and all of them get that owner's key", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			inRounds(t, func(id string) {
				got := race(t, s, func(i int) idempay.ReserveRequest { return request(id, fmt.Sprintf("owner-%02d", i)) })
				creators := winners(got, func(r idempay.Reservation) bool { return r.Created })
				switch {
				case len(creators) == 0:
					t.Fatalf("%s: no racer got Created: the intent had no record, so one insert must have won", id)
				case len(creators) > 1:
					t.Errorf("%s: %d racers got Created (%v): several keys issued for one intent, a double charge", id, len(creators), creators)
				}
				if c := winners(got, func(r idempay.Reservation) bool { return r.Claimed }); len(c) != 1 {
					t.Errorf("%s: %d racers got Claimed (%v); want 1: the creator's lease was running for all the others", id, len(c), c)
				}
				stored := load(t, s, "ns", id).Key
				if want := request(id, fmt.Sprintf("owner-%02d", creators[0])).Key; len(creators) == 1 && stored != want {
					t.Errorf("%s: stored key = %q; want %q, the key of the racer that created the record", id, stored, want)
				}
				checkOneKey(t, got, stored)
			})
		},
	}, {
		name: "Concurrency/racing Reserves of distinct intents all create",
		rule: "Concurrent Reserves of different intents do not interfere: each one creates its own record",
		run: func(t *testing.T, s idempay.KeyStore) {
			const perRacer = 4
			together(racers, func(i int) {
				for j := range perRacer {
					r := request(fmt.Sprintf("intent-with-a-long-common-prefix-%02d-%d", i, j), "owner")
					got, err := s.Reserve(t.Context(), r)
					switch { // t.Errorf is safe from any goroutine
					case err != nil:
						t.Errorf("Reserve(%q) = %v; want no error", r.ID, err)
					case !got.Created || got.Record.Key != r.Key:
						t.Errorf("Reserve(%q): Created=%v key %q; want Created and key %q", r.ID, got.Created, got.Record.Key, r.Key)
					}
				}
			})
			if open := list(t, s, "ns", idempay.Cursor{}, 1000); len(open) != racers*perRacer {
				t.Errorf("ListOpen returned %d records; want %d, one per intent reserved", len(open), racers*perRacer)
			}
		},
	}, {
		name:     "Concurrency/racing claims of a lease that ran out give it to one owner",
		rule:     fmt.Sprintf("When %d owners claim at once a record whose lease ran out (in each of several rounds), exactly one gets Claimed and holds the lease; the others are refused and see its lease: the lease check and the write are one atomic step", racers),
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			recs := map[string]idempay.Record{}
			for round := range rounds {
				id := fmt.Sprintf("order-%d", round)
				recs[id] = reserve(t, s, withLease(request(id, "owner-a"), shortLease)).Record
			}
			sleepPast(recs[fmt.Sprintf("order-%d", rounds-1)].LeaseUntil)
			inRounds(t, func(id string) {
				got := race(t, s, func(i int) idempay.ReserveRequest { return request(id, fmt.Sprintf("owner-%02d", i)) })
				w := winners(got, func(r idempay.Reservation) bool { return r.Claimed })
				if len(w) != 1 {
					t.Fatalf("%s: %d racers got Claimed (%v); want exactly 1: two owners may now send at once", id, len(w), w)
				}
				owner := fmt.Sprintf("owner-%02d", w[0])
				if c := winners(got, func(r idempay.Reservation) bool { return r.Created }); len(c) != 0 {
					t.Errorf("%s: racers %v got Created for a record that existed", id, c)
				}
				if stored := load(t, s, "ns", id); stored.LeaseOwner != owner || stored.Key != recs[id].Key {
					t.Errorf("%s after the race: LeaseOwner %q key %q; want %q, the one that got Claimed, and the original key %q", id, stored.LeaseOwner, stored.Key, owner, recs[id].Key)
				}
				for i, g := range got {
					if !g.Claimed && g.Record.LeaseOwner != owner {
						t.Errorf("%s: racer %d was refused but saw LeaseOwner %q; want %q", id, i, g.Record.LeaseOwner, owner)
					}
				}
			})
		},
	}, {
		name: "Concurrency/racing new attempts of a failed intent begin one",
		rule: fmt.Sprintf("When %d owners Reserve the next attempt of a failed record at once (in each of several rounds), each with its own key and parameters, exactly one begins it (Created and Claimed), History gains one entry, and all of them see the winner's key", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			inRounds(t, func(id string) {
				old := failed(t, s, id)
				got := race(t, s, func(i int) idempay.ReserveRequest { return nextAttempt(id, 2, fmt.Sprintf("owner-%02d", i)) })
				w := winners(got, func(r idempay.Reservation) bool { return r.Created })
				if len(w) != 1 {
					t.Fatalf("%s: %d racers began attempt 2 (%v); want exactly 1", id, len(w), w)
				}
				if c := winners(got, func(r idempay.Reservation) bool { return r.Claimed }); len(c) != 1 || c[0] != w[0] {
					t.Errorf("%s: racers %v got Claimed; want only %d, the one that began the attempt", id, c, w[0])
				}
				r := nextAttempt(id, 2, fmt.Sprintf("owner-%02d", w[0]))
				checkStored(t, s, id+" after racing new attempts", begun(old, r, got[w[0]].Now))
				checkOneKey(t, got, r.Key)
			})
		},
	}, {
		name: "Concurrency/racing Resolves of one record close it once",
		rule: fmt.Sprintf("When %d callers Resolve the same open record to succeeded at once (in each of several rounds), exactly one succeeds and the others get ErrAlreadyResolved", racers),
		run: func(t *testing.T, s idempay.KeyStore) {
			inRounds(t, func(id string) {
				r := reserve(t, s, request(id, "owner-a")).Record
				errs := make([]error, racers)
				together(racers, func(i int) {
					res := resolution(r, idempay.StateSucceeded)
					res.ProviderRef = fmt.Sprintf("ch_%02d", i)
					errs[i] = s.Resolve(t.Context(), res)
				})
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Errorf("%s: callers %d and %d both resolved the record: the second overwrote a closed outcome", id, winner, i)
					case err == nil:
						winner = i
					case !errors.Is(err, idempay.ErrAlreadyResolved):
						t.Errorf("%s: Resolve by caller %d = %v; want nil or ErrAlreadyResolved", id, i, err)
					}
				}
				if winner < 0 {
					t.Fatalf("%s: no Resolve succeeded; want exactly one", id)
				}
				if got := load(t, s, "ns", id); got.ProviderRef != fmt.Sprintf("ch_%02d", winner) {
					t.Errorf("%s: stored ProviderRef = %q; want %q, written by the one Resolve that succeeded", id, got.ProviderRef, fmt.Sprintf("ch_%02d", winner))
				}
			})
		},
	}, {
		name:     "Concurrency/a release racing a takeover never frees the new holder's lease",
		rule:     fmt.Sprintf("For each of %d intents whose lease by owner-a has run out, owner-a's release (LeaseOwner owner-a) and owner-b's claim race; whichever lands first, owner-b ends up holding the lease: the owner check and the write are one atomic step", racers),
		parallel: true,
		run: func(t *testing.T, s idempay.KeyStore) {
			recs := make([]idempay.Record, racers)
			for i := range recs {
				recs[i] = reserve(t, s, withLease(request(fmt.Sprintf("order-%02d", i), "owner-a"), shortLease)).Record
			}
			sleepPast(recs[racers-1].LeaseUntil)
			together(2*racers, func(i int) {
				r := recs[i/2]
				if i%2 == 0 {
					if err := s.Resolve(t.Context(), release(r, "owner-a")); err != nil && !errors.Is(err, idempay.ErrLeaseLost) {
						t.Errorf("release of %s by owner-a = %v; want nil or ErrLeaseLost", r.ID, err)
					}
					return
				}
				got, err := s.Reserve(t.Context(), request(r.ID, "owner-b"))
				switch {
				case err != nil:
					t.Errorf("Reserve of %s by owner-b = %v; want no error", r.ID, err)
				case !got.Claimed:
					t.Errorf("Reserve of %s by owner-b after owner-a's lease ran out: Claimed = false; want true (released or run out, the lease was free)", r.ID)
				}
			})
			var freed []string
			for _, r := range recs {
				if got := load(t, s, "ns", r.ID); got.LeaseOwner != "owner-b" {
					freed = append(freed, fmt.Sprintf("%s (owner %q)", r.ID, got.LeaseOwner))
				}
			}
			if len(freed) > 0 {
				t.Errorf("%d of %d intents lost owner-b's lease to owner-a's late release: %s", len(freed), racers, strings.Join(freed[:min(len(freed), 3)], ", "))
			}
		},
	}}
}
