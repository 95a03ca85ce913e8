package fleet

import (
	"context"
	"flag"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

var seedFlag = flag.Uint64("fleet.seed", 0, "seed of the fleet test's orders and faults (0: a random one, logged)")

// raceFaults is the chaos tests' mix: 10% of requests lost before the
// server acts, 10% crashing mid-processing (the key stays claimed for the
// server's lease), 10% charged with the answer lost, 5% 503.
var raceFaults = refserver.FaultRates{Pre: 0.10, Mid: 0.10, Post: 0.10, Unavailable: 0.05}

// Race is the fleet test. -fleet.procs processes share one store and race
// to charge the same -fleet.intents intents, each process in its own
// shuffled order with -fleet.workers concurrent callers, against a
// reference server with faults on (raceFaults); then, with faults off, each
// process charges again the intents it saw end unknown until they settle.
//
// It fails unless: every request of every process for an intent carries the
// same key, and the store held that key when the request arrived (checked
// by the server's OnRequest hook, through the parent's own handle on the
// store); the ledger holds exactly one charge per intent; no answer was
// "failed" (a refusal because another process holds the lease is an
// unknown, ErrInProgress, and sends nothing) or "pending" (the reference
// server has no pending charges); every success names the ledger's charge
// for its intent; every intent ends succeeded in the store, at its first
// attempt (a definite failure would have made the next charge begin
// another, under a new key), with none left open or pending.
//
// The processes use the default client lease, renewed by the heartbeat
// while a flight runs; no process dies here, so every lease is given back.
func Race(t *testing.T, s Store) {
	switch childRole() {
	case roleRacer:
		racer(t, s)
		return
	case "":
	default:
		t.Fatalf("fleet: role %q has no part in Race", childRole())
	}
	if s.Exclusive {
		t.Fatalf("fleet: Race needs a store that several processes can open at once; %s cannot", s.Name)
	}
	n, procs, workers := *intentsFlag, *procsFlag, *workersFlag
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	loc := s.New(t)
	view := s.Open(t, loc)
	ns := namespace(t, account)

	early := failures{t: t}
	var earlyMu sync.Mutex
	srv, url, stop := refserver.Start(refserver.Config{
		Faults: raceFaults, Seed: seed, Lease: serverLease,
		// The reservation must come first: a request whose key the
		// shared store does not hold yet is one a crash could leave
		// unknown to every other process.
		OnRequest: func(info refserver.RequestInfo) {
			rec, err := load(view, ns, info.OrderID)
			if err != nil || rec.Key != info.Key {
				earlyMu.Lock()
				early.add("unreserved", "%s: request for %s with key %q arrived before the store held it (store: %q, %v)",
					s.Name, info.OrderID, info.Key, rec.Key, err)
				earlyMu.Unlock()
			}
		},
	})
	defer stop()

	ps := make([]*proc, procs)
	for i := range ps {
		ps[i] = spawn(t, roleRacer, args{URL: url, Loc: loc, Proc: i, Seed: seed, Prefix: "fleet",
			Intents: n, Workers: workers, Lease: fleetLease})
	}
	// Start them together: a process that started a few tens of
	// milliseconds early would otherwise settle its first intents alone.
	for _, p := range ps {
		p.await(t, 0, time.Minute)
	}
	begin := time.Now()
	for _, p := range ps {
		p.proceed(t)
	}
	for _, p := range ps {
		p.await(t, 1, 5*time.Minute)
	}
	pass1 := time.Since(begin)
	st1 := srv.Stats()
	if err := srv.SetFaults(refserver.FaultRates{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		p.proceed(t)
	}
	for _, p := range ps {
		p.wait(t, 5*time.Minute)
	}
	stop() // every handler has returned: the ledger and the stats are final
	total := time.Since(begin)

	var results []event
	for _, p := range ps {
		results = append(results, p.results()...)
	}
	f := failures{t: t}
	charged := checkLedger(&f, srv, "fleet", n)
	checkStore(&f, view, ns, "fleet", n, charged)
	sum := checkAnswers(&f, results, charged, "fleet", procs, n)
	st := srv.Stats()
	if sum.attempts != st.Requests {
		f.add("count", "the processes counted %d requests, the server received %d", sum.attempts, st.Requests)
	}
	f.report()
	earlyMu.Lock()
	early.report()
	earlyMu.Unlock()

	t.Logf("fleet %s: %d intents, %d processes x %d callers, seed %d, %v (pass 1 %v)",
		s.Name, n, procs, workers, seed, total.Round(time.Millisecond), pass1.Round(time.Millisecond))
	t.Logf("server: %d requests (%d in pass 1), faults pre=%d mid=%d post=%d unavailable=%d, replays %d, reclaims %d, charges %d",
		st.Requests, st1.Requests, st.Faults[refserver.Pre], st.Faults[refserver.Mid], st.Faults[refserver.Post],
		st.Faults[refserver.Unavailable], st.Replays, st.Reclaims, srv.Ledger().Len())
	t.Logf("pass 1: %d answers: %d succeeded (%d fresh, %d replayed by the server, %d from the store), "+
		"%d unknown (%d in progress: %d refused by the lease sending nothing, %d after 409s)",
		sum.answers[1], sum.succeeded, sum.fresh, sum.fromServer, sum.fromStore,
		sum.unknown, sum.inProgressLease+sum.inProgress409, sum.inProgressLease, sum.inProgress409)
	t.Logf("pass 2: %d intents had no success in any process after pass 1, %d settled on the second pass; %d answers, %d refused by the lease",
		sum.unsettled, sum.settledLater, sum.answers[2], sum.pass2Lease)
}

// racer is a child of Race.
func racer(t *testing.T, s Store) {
	a := childArgs(t)
	c := newClient(t, a.URL, s.Open(t, a.Loc), a.Lease)
	ctx := context.Background()
	// Each process its own order, so that processes meet on every
	// intent at every stage of its life: first reservation, in flight,
	// unknown and released, settled.
	order := rand.New(rand.NewPCG(a.Seed, uint64(a.Proc))).Perm(a.Intents)

	emitPhase(0)
	waitForParent(t) // every process is ready

	var (
		mu      sync.Mutex
		unknown []int
	)
	each(order, a.Workers, func(i int) {
		ch, err := c.Charge(ctx, request(a.Prefix, i))
		emit(resultOf(1, intentID(a.Prefix, i), ch, err))
		if err != nil && idempay.OutcomeOf(err) == idempay.OutcomeUnknown {
			mu.Lock()
			unknown = append(unknown, i)
			mu.Unlock()
		}
	})
	emitPhase(1)
	waitForParent(t) // the parent turns the faults off

	deadline := time.Now().Add(time.Minute)
	each(unknown, a.Workers, func(i int) {
		for {
			ch, err := c.Charge(ctx, request(a.Prefix, i))
			emit(resultOf(2, intentID(a.Prefix, i), ch, err))
			if idempay.OutcomeOf(err) != idempay.OutcomeUnknown || time.Now().After(deadline) {
				return // the parent finds an intent left unknown
			}
			// Another process holds the lease while it settles the
			// same intent, or the server's claim of a Mid crash has
			// yet to run out: either ends within milliseconds.
			time.Sleep(10 * time.Millisecond)
		}
	})
	emitPhase(2)
}

// each calls fn for every element of items from workers goroutines.
func each(items []int, workers int, fn func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= len(items) {
					return
				}
				fn(items[k])
			}
		})
	}
	wg.Wait()
}

// checkLedger checks that every intent was charged exactly once, with one
// key, and returns the charge of each.
func checkLedger(f *failures, srv *refserver.Server, prefix string, n int) map[string]refserver.Charge {
	ledger := srv.Ledger()
	if err := ledger.Check(); err != nil {
		f.add("double charge", "%v", err)
	}
	charged := map[string]refserver.Charge{}
	for _, c := range ledger.Charges() {
		if _, dup := charged[c.Intent]; !dup {
			charged[c.Intent] = c
		}
	}
	keys := srv.Stats().KeysByOrder
	for i := range n {
		id := intentID(prefix, i)
		if got := ledger.Count(id); got != 1 {
			f.add("charges", "intent %s charged %d times, want exactly once", id, got)
		}
		if k := keys[id]; len(k) != 1 {
			f.add("keys", "intent %s sent with %d distinct keys %v over every process, want 1", id, len(k), k)
		}
	}
	if got := ledger.Len(); got != n {
		f.add("charges", "the ledger holds %d charges for %d intents", got, n)
	}
	return charged
}

// checkStore checks that every intent ended succeeded in the store, under
// the key and charge the server knows, with nothing left open.
func checkStore(f *failures, s idempay.KeyStore, ns, prefix string, n int, charged map[string]refserver.Charge) {
	for i := range n {
		id := intentID(prefix, i)
		rec, err := load(s, ns, id)
		ch := charged[id]
		switch {
		case err != nil:
			f.add("store", "intent %s: %v", id, err)
		case rec.State != idempay.StateSucceeded:
			f.add("store", "intent %s ended %s in the store, want succeeded", id, rec.State)
		case rec.Key != ch.Key || rec.ProviderRef != ch.ID:
			f.add("store", "intent %s stored with key %q and charge %q; the server charged %q under %q",
				id, rec.Key, rec.ProviderRef, ch.ID, ch.Key)
		case rec.Attempt != 1 || len(rec.History) > 0:
			// Only a definite failure begins another attempt (with a new
			// key): none may have been recorded where money may have moved.
			f.add("attempts", "intent %s is at attempt %d with %d earlier ones; want its first and only attempt",
				id, rec.Attempt, len(rec.History))
		}
	}
	open, err := countOpen(s, ns)
	if err != nil || open > 0 {
		f.add("store", "%d intents left open (%v)", open, err)
	}
}

// countOpen pages through the open and pending records of ns, as
// Client.Unresolved does, and counts them.
func countOpen(s idempay.KeyStore, ns string) (int, error) {
	const page = 100
	var after idempay.Cursor
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		recs, err := s.ListOpen(ctx, ns, after, page)
		cancel()
		if err != nil {
			return n, err
		}
		n += len(recs)
		if len(recs) < page {
			return n, nil
		}
		after = idempay.CursorOf(recs[len(recs)-1])
	}
}

// answers sums up what the processes were told.
type answers struct {
	attempts                       int
	answers                        [3]int // by pass
	succeeded, fresh               int    // pass 1
	fromServer, fromStore          int    // pass 1
	unknown                        int    // pass 1, in progress included
	inProgressLease, inProgress409 int    // pass 1
	pass2Lease                     int
	unsettled, settledLater        int // intents
}

// checkAnswers checks every answer a process got against the ledger: one
// key per intent, a success names the intent's one charge, nothing
// "failed", a lease refusal sends nothing, and every process saw each
// intent once in pass 1 and settled in pass 2 each one it saw unknown.
func checkAnswers(f *failures, results []event, charged map[string]refserver.Charge, prefix string, procs, n int) answers {
	var sum answers
	type pk struct {
		proc   int
		intent string
	}
	first := map[pk]event{}                 // pass 1 answer of each process
	last := map[pk]event{}                  // last pass 2 answer
	succeededSomewhere := map[string]bool{} // in pass 1
	for _, ev := range results {
		ch := charged[ev.Intent]
		sum.attempts += ev.Attempts
		sum.answers[ev.Phase]++
		k := pk{ev.Proc, ev.Intent}
		if ev.Phase == 1 {
			if _, dup := first[k]; dup {
				f.add("protocol", "process %d answered twice for %s in pass 1", ev.Proc, ev.Intent)
			}
			first[k] = ev
		} else {
			last[k] = ev
		}
		if ev.Key != "" && ev.Key != ch.Key {
			f.add("keys", "process %d, pass %d: intent %s answered with key %q; the server charged it under %q",
				ev.Proc, ev.Phase, ev.Intent, ev.Key, ch.Key)
		}
		switch ev.Outcome {
		case "failed":
			f.add("failed", "process %d, pass %d: intent %s reported failed, though money may have moved: %s",
				ev.Proc, ev.Phase, ev.Intent, ev.Err)
		case "pending":
			f.add("pending", "process %d, pass %d: intent %s reported pending; the reference server never leaves "+
				"a charge pending: %s", ev.Proc, ev.Phase, ev.Intent, ev.Err)
		case "succeeded":
			if ev.ChargeID != ch.ID {
				f.add("replay", "process %d, pass %d: intent %s answered with charge %q; the ledger's is %q",
					ev.Proc, ev.Phase, ev.Intent, ev.ChargeID, ch.ID)
			}
			if ev.Phase == 1 {
				succeededSomewhere[ev.Intent] = true
				sum.succeeded++
				switch idempay.ReplaySource(ev.From) {
				case idempay.ReplayFromServer:
					sum.fromServer++
				case idempay.ReplayFromStore:
					sum.fromStore++
				default:
					sum.fresh++
				}
			}
		case "unknown":
			leaseRefusal := ev.InProgress && ev.Attempts == 0
			switch {
			case ev.Phase == 2 && leaseRefusal:
				sum.pass2Lease++
			case ev.Phase == 2:
			case leaseRefusal:
				sum.inProgressLease++
			case ev.InProgress:
				sum.inProgress409++
			}
			if ev.Phase == 1 {
				sum.unknown++
			}
		default:
			f.add("protocol", "process %d: outcome %q", ev.Proc, ev.Outcome)
		}
	}
	for p := range procs {
		for i := range n {
			id := intentID(prefix, i)
			ev, ok := first[pk{p, id}]
			if !ok {
				f.add("protocol", "process %d never answered for %s in pass 1", p, id)
				continue
			}
			if ev.Outcome != "unknown" {
				continue
			}
			if end, ok := last[pk{p, id}]; !ok || end.Outcome != "succeeded" {
				f.add("unsettled", "process %d: intent %s still %s after pass 2: %s", p, id, end.Outcome, end.Err)
			}
		}
	}
	for i := range n {
		if !succeededSomewhere[intentID(prefix, i)] {
			sum.unsettled++
		}
	}
	// Every such intent was unknown in every process, so each of them
	// charged it again in pass 2; those still unknown at their last try
	// were reported above.
	left := map[string]bool{}
	for _, ev := range last {
		if ev.Outcome != "succeeded" {
			left[ev.Intent] = true
		}
	}
	sum.settledLater = sum.unsettled - len(left)
	return sum
}

// failures reports failed checks, a few of each kind in full and the rest
// as a count, so that a broken run of thousands of intents stays readable.
type failures struct {
	t testing.TB
	n map[string]int
}

const failuresShown = 5

func (f *failures) add(kind, format string, args ...any) {
	f.t.Helper()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[kind]++
	if f.n[kind] <= failuresShown {
		f.t.Errorf(format, args...)
	}
}

func (f *failures) report() {
	f.t.Helper()
	kinds := make([]string, 0, len(f.n))
	for k := range f.n {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if n := f.n[k]; n > failuresShown {
			f.t.Errorf("... %d %q failures in all", n, k)
		}
	}
}
