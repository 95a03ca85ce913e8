package fleet

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

// Takeover is the crash test of a shared store. A first process (the
// holder) charges -takeover.intents intents at once with a client lease of
// -takeover.lease; the server holds every request as it arrives, so the
// holder has reserved each intent, holds its lease and has sent its key.
// The holder is then killed with SIGKILL. Of the held requests, a third is
// dropped before the server acts, a third crashes the server mid-request
// (its key stays claimed at the server) and a third is charged with the
// answer lost: the three things a crash of the sender can leave behind.
//
// A second process (the heir) opens the same store. While the dead
// holder's leases last, charging each intent must be refused with
// ErrInProgress, as an unknown outcome, without a request reaching the
// server. After the leases, the heir charges each intent again and must
// settle it with the holder's key: a replay for the intents the server
// charged, a first charge for the others, and never a second charge.
// The heir is started before the holder and waits for the parent, so
// that the start of a process (the slowest step on a loaded machine) is
// not taken from the leases the refusals are tested under.
//
// For a store only one process may open at a time (Store.Exclusive), the
// heir opens it only after the kill, which is what a restart on one
// machine is; the store is then checked once the heir has exited.
func Takeover(t *testing.T, s Store) {
	switch childRole() {
	case roleHolder:
		holder(t, s)
		return
	case roleHeir:
		heir(t, s)
		return
	case "":
	default:
		t.Fatalf("fleet: role %q has no part in Takeover", childRole())
	}
	n, lease := *takeoverIntents, *takeoverLease
	const prefix = "takeover"
	loc := s.New(t)
	var view idempay.KeyStore
	if !s.Exclusive {
		view = s.Open(t, loc)
	}
	ns := namespace(t, account)

	var (
		mu       sync.Mutex
		holding  = true
		arrivals = make(chan refserver.RequestInfo, n)
		release  = make(chan struct{})
		early    = failures{t: t}
	)
	srv, url, stop := refserver.Start(refserver.Config{
		Lease: serverLease,
		OnRequest: func(info refserver.RequestInfo) {
			if view != nil {
				if rec, err := load(view, ns, info.OrderID); err != nil || rec.Key != info.Key {
					mu.Lock()
					early.add("unreserved", "%s: request for %s with key %q arrived before the store held it (store: %q, %v)",
						s.Name, info.OrderID, info.Key, rec.Key, err)
					mu.Unlock()
				}
			}
			mu.Lock()
			h := holding
			mu.Unlock()
			if !h {
				return
			}
			select {
			case arrivals <- info:
			default:
				t.Errorf("more requests than intents arrived while holding: %s", info.OrderID)
			}
			<-release // hang, as a slow provider does, until the holder is dead
		},
	})
	defer stop()
	var releaseOnce sync.Once
	letGo := func() {
		mu.Lock()
		holding = false
		mu.Unlock()
		releaseOnce.Do(func() { close(release) })
	}
	defer letGo() // runs before stop, so that stop does not wait on held handlers

	// The heir first: it starts up and waits, before the holder takes
	// any lease.
	hr := spawn(t, roleHeir, args{URL: url, Loc: loc, Proc: 1, Prefix: prefix, Intents: n, Workers: 8, Lease: lease})
	hr.await(t, 0, time.Minute)
	begin := time.Now()
	h := spawn(t, roleHolder, args{URL: url, Loc: loc, Proc: 0, Prefix: prefix, Intents: n, Workers: n, Lease: lease})
	keyOf := map[string]string{}
	timeout := time.After(time.Minute)
	for len(keyOf) < n {
		select {
		case info := <-arrivals:
			if _, dup := keyOf[info.OrderID]; dup {
				t.Fatalf("the holder sent %s twice while its first request was held", info.OrderID)
			}
			keyOf[info.OrderID] = info.Key
		case <-timeout:
			t.Fatalf("only %d of %d requests of the holder arrived\n%s", len(keyOf), n, h.diag())
		}
	}
	if view != nil {
		// What the heir will find: open, leased to the holder.
		for id, key := range keyOf {
			rec, err := load(view, ns, id)
			if err != nil || rec.Key != key || rec.State != idempay.StateOpen || rec.LeaseOwner == "" ||
				!rec.LeaseUntil.After(time.Now()) {
				t.Fatalf("before the kill, %s is stored as %+v (%v); want open, key %q, leased", id, rec, err, key)
			}
		}
	}
	h.kill(t)
	killed := time.Since(begin)
	if res := h.results(); len(res) > 0 {
		t.Fatalf("the holder was answered while the server held its requests: %+v", res[0])
	}

	// Decide the fate of each held request, then let them go. The holder
	// is gone, so no answer reaches anyone.
	ids := make([]string, 0, n)
	for id := range keyOf {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fate := map[string]refserver.Fault{}
	want := map[refserver.Fault]int{}
	for i, id := range ids {
		f := [...]refserver.Fault{refserver.Pre, refserver.Mid, refserver.NoFault}[i%3]
		fate[id] = f
		want[f]++
		if f != refserver.NoFault {
			srv.InjectOrder(id, f)
		}
	}
	letGo()
	waitFor(t, 10*time.Second, "the held requests to end", func() bool {
		st := srv.Stats()
		return srv.Ledger().Len() == want[refserver.NoFault] &&
			st.Faults[refserver.Pre] == want[refserver.Pre] && st.Faults[refserver.Mid] == want[refserver.Mid]
	})
	before := srv.Stats().Requests

	heirBegin := time.Now()
	hr.proceed(t)
	hr.await(t, 1, time.Minute)
	refusedIn := time.Since(heirBegin)
	phase1Requests := srv.Stats().Requests - before
	if phase1Requests != 0 {
		t.Errorf("the heir sent %d requests while the holder's leases were live; want none", phase1Requests)
	}
	hr.proceed(t)
	hr.wait(t, 2*time.Minute)
	letGo()
	stop()
	if view == nil {
		view = s.Open(t, loc)
	}

	f := failures{t: t}
	minLeft := time.Duration(1<<63 - 1)
	var replays, fresh, refused int
	last := map[string]event{}
	for _, ev := range hr.results() {
		key := keyOf[ev.Intent]
		if ev.Key != key {
			f.add("keys", "heir, phase %d: %s answered with key %q; the holder sent %q", ev.Phase, ev.Intent, ev.Key, key)
		}
		if ev.Outcome == "failed" {
			f.add("failed", "heir, phase %d: %s reported failed, though the holder may have charged it: %s",
				ev.Phase, ev.Intent, ev.Err)
		}
		if ev.Phase == 2 {
			last[ev.Intent] = ev
			continue
		}
		minLeft = min(minLeft, ev.LeaseLeft)
		switch {
		case ev.LeaseLeft <= 0:
			f.add("slow", "the holder's lease on %s ran out before the heir charged it, so the refusal was not tested: "+
				"raise -takeover.lease (now %v)", ev.Intent, lease)
		case ev.Outcome != "unknown" || !ev.InProgress || ev.Attempts != 0:
			f.add("refusal", "heir, while the lease was live: %s answered %s (in progress %v, %d requests), "+
				"want unknown, ErrInProgress, nothing sent: %s", ev.Intent, ev.Outcome, ev.InProgress, ev.Attempts, ev.Err)
		default:
			refused++
		}
	}
	charged := checkLedger(&f, srv, prefix, n)
	for _, id := range ids {
		ev, ok := last[id]
		switch {
		case !ok:
			f.add("unsettled", "the heir never charged %s after the lease", id)
		case ev.Outcome != "succeeded":
			f.add("unsettled", "the heir left %s %s: %s", id, ev.Outcome, ev.Err)
		case ev.ChargeID != charged[id].ID:
			f.add("replay", "the heir was answered charge %q for %s; the ledger's is %q", ev.ChargeID, id, charged[id].ID)
		case fate[id] == refserver.NoFault && idempay.ReplaySource(ev.From) != idempay.ReplayFromServer:
			f.add("replay", "%s was charged for the dead holder, yet the heir's answer was %q, not a replay by the server",
				id, ev.From)
		case idempay.ReplaySource(ev.From) == idempay.ReplayFromServer:
			replays++
		default:
			fresh++
		}
		if k := srv.Stats().KeysByOrder[id]; len(k) != 1 || k[0] != keyOf[id] {
			f.add("keys", "%s sent with keys %v over both processes; the holder's was %q", id, k, keyOf[id])
		}
	}
	checkStore(&f, view, ns, prefix, n, charged)
	f.report()
	mu.Lock()
	early.report()
	mu.Unlock()

	st := srv.Stats()
	t.Logf("takeover %s: %d intents held by a process killed after %v (lease %v): %d dropped before the server acted, "+
		"%d crashed mid-request, %d charged with the answer lost", s.Name, n, killed.Round(time.Millisecond), lease,
		want[refserver.Pre], want[refserver.Mid], want[refserver.NoFault])
	t.Logf("heir: while the leases lasted, %d of %d refused with ErrInProgress within %v of the go (least lease left %v), "+
		"%d requests sent; after the leases %d requests settled them: %d replays of the dead process's charges, "+
		"%d first charges, %d server claims reclaimed", refused, n, refusedIn.Round(time.Millisecond),
		minLeft.Round(time.Millisecond), phase1Requests, st.Requests-before-phase1Requests, replays, fresh, st.Reclaims)
}

// holder is the process Takeover kills: it charges every intent at once
// and never gets an answer.
func holder(t *testing.T, s Store) {
	a := childArgs(t)
	c := newClient(t, a.URL, s.Open(t, a.Loc), a.Lease)
	all := make([]int, a.Intents)
	for i := range all {
		all[i] = i
	}
	each(all, a.Workers, func(i int) {
		ch, err := c.Charge(context.Background(), request(a.Prefix, i))
		emit(resultOf(1, intentID(a.Prefix, i), ch, err))
	})
	emitPhase(1)
}

// heir is the process that takes the killed holder's intents over. It is
// started before the holder and waits for the parent's go after the kill;
// a store that one process at a time may open is opened only then.
func heir(t *testing.T, s Store) {
	a := childArgs(t)
	var store idempay.KeyStore
	if !s.Exclusive {
		store = s.Open(t, a.Loc)
	}
	emitPhase(0)
	waitForParent(t) // the holder is dead
	if store == nil {
		store = s.Open(t, a.Loc)
	}
	c := newClient(t, a.URL, store, a.Lease)
	ns := c.Namespace()
	ctx := context.Background()

	// While the leases last: every charge must be refused unsent.
	var until time.Time
	for i := range a.Intents {
		id := intentID(a.Prefix, i)
		rec, err := load(store, ns, id)
		if err != nil {
			t.Fatalf("heir: %s: %v", id, err)
		}
		ch, err := c.Charge(ctx, request(a.Prefix, i))
		ev := resultOf(1, id, ch, err)
		// Measured after the charge: positive means the lease was
		// live for the whole call.
		ev.LeaseLeft = time.Until(rec.LeaseUntil)
		emit(ev)
		if rec.LeaseUntil.After(until) {
			until = rec.LeaseUntil
		}
	}
	emitPhase(1)
	waitForParent(t) // the parent checks that nothing was sent

	// After the leases: take over with the stored keys.
	time.Sleep(time.Until(until))
	all := make([]int, a.Intents)
	for i := range all {
		all[i] = i
	}
	deadline := time.Now().Add(time.Minute)
	each(all, a.Workers, func(i int) {
		for {
			ch, err := c.Charge(ctx, request(a.Prefix, i))
			emit(resultOf(2, intentID(a.Prefix, i), ch, err))
			if idempay.OutcomeOf(err) != idempay.OutcomeUnknown || time.Now().After(deadline) {
				return
			}
			time.Sleep(10 * time.Millisecond) // a server claim left by the Mid crash runs out
		}
	})
	emitPhase(2)
}

// waitFor polls cond until it holds, failing t after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
