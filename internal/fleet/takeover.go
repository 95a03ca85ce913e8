package fleet

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

// The phases of Takeover, as the children report them.
const (
	phaseReady  = 0 // the heir is up and waits
	phaseProbe  = 1 // charges while the holder lives: every one refused
	phaseResume = 2 // the heir's charges after the kill
	phaseHeld   = 3 // the holder's own charges: never answered
)

// Takeover is the crash test of a store: what a SIGKILL costs the intents a
// process held, with leases that are short and renewed by a heartbeat
// (issue 8 item 7).
//
// A first process (the holder) charges -takeover.intents intents at once
// with a client lease of -takeover.lease; the server holds every request as
// it arrives, so the holder has reserved each intent, holds its lease and
// has sent its key. The requests are held for more than one lease term
// (lease + lease/4 after the last one arrived), then, while the holder
// still lives, every intent is charged by another flight:
//
//   - by a second Client inside the holder's process (every store; for a
//     store only one process may open, Store.Exclusive, the only other
//     caller there can be);
//   - by the heir, a second process on the same store (shared stores).
//
// Each such charge must be refused with ErrInProgress, as an unknown
// outcome, without a request reaching the server, and the record must show
// a lease that was renewed: LeaseUntil later than CreatedAt + lease, both on
// the store's clock. A lease that was not renewed would have run out by
// then and been taken, so the refusals prove the heartbeat.
//
// The holder is then killed with SIGKILL. Of the held requests, a third is
// dropped before the server acts, a third crashes the server mid-request
// (its key stays claimed at the server) and a third is charged with the
// answer lost: the three things a crash of the sender can leave behind.
// The heir, told at once, charges every intent until it is settled, trying
// again every 50 ms while it is refused by a lease. The stall is the time
// from the kill to the arrival at the server of the heir's first request of
// the last intent it resumed. It is logged, and must be
//
//   - under two leases for a shared store: the dead holder's leases run out
//     within one lease of its last renewal, and nothing else frees them;
//   - under one lease for an exclusive store, whose heir opens the store
//     only after the kill (a restart on one machine) and is never refused
//     by a lease: holding the file's lock proves the holder dead, and the
//     file store voids its leases on open (Store.VoidedLeases, when the
//     store has it, must count every held intent).
//
// Then: every intent settled by the heir with the holder's key (a replay
// for the intents the server charged, a first charge for the others), one
// charge and one key per intent, nothing "failed", one attempt per intent
// in the store.
//
// The heir is started before the holder and waits for the parent, so that
// the start of a process (the slowest step on a loaded machine) is neither
// taken from the hold nor counted in the stall.
//
// -takeover.lease defaults to the client's default lease
// (idempay.DefaultLease, 5 s), so that the stall each store's run reports
// is the one a service gets by default: about 10 s for a shared store
// (2.5 leases), 7 s for the file store. -takeover.lease=1s makes a quick
// run (about 3 s).
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
	if lease < idempay.MinLease {
		t.Fatalf("-takeover.lease %v is shorter than idempay.MinLease %v", lease, idempay.MinLease)
	}
	const prefix = "takeover"
	loc := s.New(t)
	var view idempay.KeyStore
	if !s.Exclusive {
		view = s.Open(t, loc)
	}
	ns := namespace(t, account)

	var (
		mu        sync.Mutex
		holding   = true                   // the holder lives
		keyOf     = map[string]string{}    // the holder's request of each intent
		intruders []refserver.RequestInfo  // other requests while the holder lives
		resumedAt = map[string]time.Time{} // the heir's first request of each intent
		arrivals  = make(chan refserver.RequestInfo, n)
		release   = make(chan struct{})
		early     = failures{t: t}
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
			if !holding {
				if _, ok := resumedAt[info.OrderID]; !ok {
					resumedAt[info.OrderID] = time.Now()
				}
				mu.Unlock()
				return
			}
			if _, ok := keyOf[info.OrderID]; ok {
				// A second request of an intent while its first is
				// held: another flight got past the holder's lease.
				// Let it through, as a provider would.
				intruders = append(intruders, info)
				mu.Unlock()
				return
			}
			keyOf[info.OrderID] = info.Key
			mu.Unlock()
			arrivals <- info // room for one request per intent
			<-release        // hang, as a slow provider does, until the holder is dead
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
	hr := spawn(t, roleHeir, args{URL: url, Loc: loc, Proc: 1, Prefix: prefix, Intents: n, Lease: lease})
	hr.await(t, phaseReady, time.Minute)
	begin := time.Now()
	h := spawn(t, roleHolder, args{URL: url, Loc: loc, Proc: 0, Prefix: prefix, Intents: n, Workers: n, Lease: lease})
	timeout := time.After(time.Minute)
	for got := 0; got < n; got++ {
		select {
		case <-arrivals:
		case <-timeout:
			t.Fatalf("only %d of %d requests of the holder arrived\n%s", got, n, h.diag())
		}
	}
	held := time.Now()
	mu.Lock()
	holderKeys := make(map[string]string, n)
	for id, k := range keyOf {
		holderKeys[id] = k
	}
	mu.Unlock()
	ids := make([]string, 0, n)
	for id := range holderKeys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ownerOf := map[string]string{}
	if view != nil {
		// What the heir will find: open, leased to the holder.
		for _, id := range ids {
			rec, err := load(view, ns, id)
			if err != nil || rec.Key != holderKeys[id] || rec.State != idempay.StateOpen || rec.LeaseOwner == "" {
				t.Fatalf("while its request is held, %s is stored as %+v (%v); want open, key %q, leased", id, rec, err, holderKeys[id])
			}
			ownerOf[id] = rec.LeaseOwner
		}
	}

	// More than one lease term: only renewals keep the leases now.
	hold := lease + lease/4
	time.Sleep(time.Until(held.Add(hold)))
	probeBegin := time.Now()
	probers := []*proc{h}
	if !s.Exclusive {
		probers = append(probers, hr)
	}
	for _, p := range probers {
		p.proceed(t)
	}
	for _, p := range probers {
		p.await(t, phaseProbe, time.Minute)
	}
	probed := time.Since(probeBegin)
	mu.Lock()
	intruded := len(intruders)
	mu.Unlock()

	// While the holder lived: refused, nothing sent, leases renewed.
	f := failures{t: t}
	if intruded > 0 {
		mu.Lock()
		f.add("intruders", "%d requests of %v reached the server while the holder's leases were live; want none",
			intruded, orderIDs(intruders))
		mu.Unlock()
	}
	refused := map[int]int{}
	minRenewed := time.Duration(1<<63 - 1)
	for _, p := range probers {
		for _, ev := range p.results() {
			if ev.Phase != phaseProbe {
				continue
			}
			who := [...]string{"a second client in the holder's process", "the heir"}[ev.Proc]
			if ev.Key != holderKeys[ev.Intent] {
				f.add("keys", "%s, while the holder lived: %s answered with key %q; the holder sent %q",
					who, ev.Intent, ev.Key, holderKeys[ev.Intent])
			}
			switch {
			case ev.Outcome != "unknown" || !ev.InProgress || ev.Attempts != 0:
				f.add("refusal", "%s, while the holder lived: %s answered %s (in progress %v, %d requests), "+
					"want unknown, ErrInProgress, nothing sent: %s", who, ev.Intent, ev.Outcome, ev.InProgress, ev.Attempts, ev.Err)
			default:
				refused[ev.Proc]++
			}
			minRenewed = min(minRenewed, ev.Renewed)
			switch {
			case ev.LoadErr != "":
				f.add("heartbeat", "%s: loading %s: %s", who, ev.Intent, ev.LoadErr)
			case ev.Renewed <= lease:
				f.add("heartbeat", "%s found %s, more than %v after the holder's request arrived, leased until %v "+
					"after its creation (store clock): no later than one lease (%v), so the holder's lease was never renewed",
					who, ev.Intent, hold.Round(time.Millisecond), ev.Renewed, lease)
			case ev.Owner == "" || (ownerOf[ev.Intent] != "" && ev.Owner != ownerOf[ev.Intent]):
				f.add("heartbeat", "%s found %s leased to %q; the flight that sent it was %q", who, ev.Intent, ev.Owner, ownerOf[ev.Intent])
			}
		}
	}
	for _, p := range probers {
		if refused[p.num] != n {
			f.add("refusal", "process %d: %d of %d charges refused while the holder lived", p.num, refused[p.num], n)
		}
	}

	killedAt := time.Now()
	h.kill(t)
	killed := killedAt.Sub(begin)

	// Decide the fate of each held request, then let them go. The holder
	// is gone, so no answer reaches anyone.
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
	if intruded == 0 { // else the intruders changed what the held requests do
		waitFor(t, 10*time.Second, "the held requests to end", func() bool {
			st := srv.Stats()
			return srv.Ledger().Len() == want[refserver.NoFault] &&
				st.Faults[refserver.Pre] == want[refserver.Pre] && st.Faults[refserver.Mid] == want[refserver.Mid]
		})
	}
	before := srv.Stats().Requests
	hr.proceed(t) // the holder is dead
	hr.wait(t, 2*time.Minute)
	stop()
	if view == nil {
		view = s.Open(t, loc)
	}

	for _, ev := range h.results() {
		if ev.Phase == phaseHeld {
			f.add("holder", "the holder was answered while the server held its requests: %s %s: %s", ev.Intent, ev.Outcome, ev.Err)
		}
	}

	voidedOnOpen := ""
	if voided := hr.eventsOf(evVoided); len(voided) > 0 {
		voidedOnOpen = fmt.Sprintf("; the heir's open voided %d leases", voided[0].N)
		if voided[0].N != n {
			f.add("voided", "the heir's store voided %d leases on open; the dead holder held %d", voided[0].N, n)
		}
	}

	// After the kill: the heir resumes every intent, soon, with its key.
	var replays, fresh, leaseRefusals int
	last := map[string]event{}
	for _, ev := range hr.results() {
		if ev.Phase != phaseResume {
			continue
		}
		if ev.Key != holderKeys[ev.Intent] {
			f.add("keys", "heir, after the kill: %s answered with key %q; the holder sent %q", ev.Intent, ev.Key, holderKeys[ev.Intent])
		}
		if ev.Outcome == "failed" || ev.Outcome == "pending" {
			f.add("failed", "heir, after the kill: %s reported %s, though the holder may have charged it: %s",
				ev.Intent, ev.Outcome, ev.Err)
		}
		if ev.InProgress && ev.Attempts == 0 {
			leaseRefusals++
		}
		last[ev.Intent] = ev
	}
	if s.Exclusive && leaseRefusals > 0 {
		f.add("voided", "the heir opened the store after the holder died and was still refused by a lease %d times: "+
			"the dead holder's leases were not voided on open", leaseRefusals)
	}
	charged := checkLedger(&f, srv, prefix, n)
	var stall time.Duration
	stallOf := ""
	for _, id := range ids {
		ev, ok := last[id]
		switch {
		case !ok:
			f.add("unsettled", "the heir never charged %s after the kill", id)
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
		if k := srv.Stats().KeysByOrder[id]; len(k) != 1 || k[0] != holderKeys[id] {
			f.add("keys", "%s sent with keys %v over both processes; the holder's was %q", id, k, holderKeys[id])
		}
		mu.Lock()
		at, ok := resumedAt[id]
		mu.Unlock()
		if !ok {
			f.add("stall", "no request of the heir for %s reached the server after the kill", id)
			continue
		}
		if d := at.Sub(killedAt); d > stall {
			stall, stallOf = d, id
		}
	}
	limit, why := 2*lease, "two leases: the dead holder's leases run out within one lease of their last renewal"
	if s.Exclusive {
		limit, why = lease, "one lease: the heir opened the store after the holder died, and its leases are void"
	}
	if stall >= limit {
		f.add("stall", "the heir resumed the last of the dead holder's intents (%s) %v after the kill; want under %s (%v)",
			stallOf, stall.Round(time.Millisecond), why, limit)
	}
	checkStore(&f, view, ns, prefix, n, charged)
	f.report()
	mu.Lock()
	early.report()
	mu.Unlock()

	st := srv.Stats()
	t.Logf("takeover %s: %d intents held by a process killed after %v (lease %v, renewed every %v; held %v, probed in %v): "+
		"%d dropped before the server acted, %d crashed mid-request, %d charged with the answer lost",
		s.Name, n, killed.Round(time.Millisecond), lease, (lease / 3).Round(time.Millisecond),
		hold.Round(time.Millisecond), probed.Round(time.Millisecond),
		want[refserver.Pre], want[refserver.Mid], want[refserver.NoFault])
	heirProbe := ""
	if !s.Exclusive {
		heirProbe = fmt.Sprintf(", %d of %d (the heir)", refused[1], n)
	}
	t.Logf("while the holder lived, %v after its requests arrived: refused with ErrInProgress, nothing sent: "+
		"%d of %d (a second client in the holder's process)%s; leases reached at least %v past creation on the store's clock; "+
		"%d requests of other flights", hold.Round(time.Millisecond), refused[0], n, heirProbe,
		minRenewed.Round(time.Millisecond), intruded)
	t.Logf("STALL %s: %v from the SIGKILL to the heir's first request of its last intent (%s), lease %v: %.2f leases; "+
		"%d lease refusals on the way%s; %d requests settled them: %d replays of the dead process's charges, %d first charges, "+
		"%d server claims reclaimed", s.Name, stall.Round(time.Millisecond), stallOf, lease, float64(stall)/float64(lease),
		leaseRefusals, voidedOnOpen, st.Requests-before, replays, fresh, st.Reclaims)
}

func orderIDs(infos []refserver.RequestInfo) []string {
	ids := make([]string, len(infos))
	for i, info := range infos {
		ids[i] = info.OrderID
	}
	return ids
}

// holdLonger lets the holder's flights wait on the held requests for as
// long as the test needs: no retry budget or HTTP timeout ends them first
// (the lease, renewed, would not).
func holdLonger(cfg *idempay.Config) {
	cfg.Retry.MaxElapsed = 10 * time.Minute
	cfg.HTTPClient = &http.Client{}
}

// holder is the process Takeover kills: it charges every intent at once
// and never gets an answer. Asked by the parent, it has a second Client
// charge each intent while its own flights still hold them.
func holder(t *testing.T, s Store) {
	a := childArgs(t)
	store := s.Open(t, a.Loc)
	c := newClient(t, a.URL, store, a.Lease, holdLonger)
	all := make([]int, a.Intents)
	for i := range all {
		all[i] = i
	}
	go each(all, a.Workers, func(i int) {
		ch, err := c.Charge(context.Background(), request(a.Prefix, i))
		emit(resultOf(phaseHeld, intentID(a.Prefix, i), ch, err))
	})
	waitForParent(t) // more than one lease has passed
	probe(t, newClient(t, a.URL, store, a.Lease), store, a)
	waitForParent(t) // until killed; a parent that died closes the pipe
}

// probe charges every intent once, reporting the record as it found it
// just before: the charges of another flight while the holder lives.
func probe(t testing.TB, c *idempay.Client, store idempay.KeyStore, a args) {
	for i := range a.Intents {
		id := intentID(a.Prefix, i)
		rec, lerr := load(store, c.Namespace(), id)
		ch, err := c.Charge(context.Background(), request(a.Prefix, i))
		ev := resultOf(phaseProbe, id, ch, err)
		ev.Owner, ev.Renewed = rec.LeaseOwner, rec.LeaseUntil.Sub(rec.CreatedAt)
		if lerr != nil {
			ev.LoadErr = lerr.Error()
		}
		emit(ev)
	}
	emitPhase(phaseProbe)
}

// heir is the process that takes the killed holder's intents over. It is
// started before the holder and waits for the parent; a store that one
// process at a time may open is opened only after the kill.
func heir(t *testing.T, s Store) {
	a := childArgs(t)
	var store idempay.KeyStore
	if !s.Exclusive {
		store = s.Open(t, a.Loc)
	}
	emitPhase(phaseReady)
	if store != nil {
		waitForParent(t) // more than one lease has passed
		probe(t, newClient(t, a.URL, store, a.Lease), store, a)
	}
	waitForParent(t) // the holder is dead
	if store == nil {
		store = s.Open(t, a.Loc)
		if v, ok := store.(interface{ VoidedLeases() int }); ok {
			emit(event{Ev: evVoided, N: v.VoidedLeases()})
		}
	}
	c := newClient(t, a.URL, store, a.Lease)
	all := make([]int, a.Intents)
	for i := range all {
		all[i] = i
	}
	deadline := time.Now().Add(time.Minute)
	each(all, a.Intents, func(i int) {
		for {
			ch, err := c.Charge(context.Background(), request(a.Prefix, i))
			emit(resultOf(phaseResume, intentID(a.Prefix, i), ch, err))
			if idempay.OutcomeOf(err) != idempay.OutcomeUnknown || time.Now().After(deadline) {
				return
			}
			// A dead holder's lease, or a server claim left by the
			// Mid crash, runs out.
			time.Sleep(50 * time.Millisecond)
		}
	})
	emitPhase(phaseResume)
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
