package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// instances returns n stores on one fresh schema, each through its own
// pool, as n instances of a service share the table.
func instances(t *testing.T, n int) []*Store {
	t.Helper()
	first := openStore(t)
	out := []*Store{first}
	for range n - 1 {
		s, err := New(t.Context(), newPool(t, poolConfig(t)), WithSchema(first.cfg.schema))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestTakeoverAcrossInstances is the store's half of a crash: instance A
// reserves with the shortest lease a Claim takes and stops renewing; B is
// refused while the lease lasts on the server's clock and takes the intent,
// with A's key, once it is over; A's late release and late owner-checked
// close are refused and leave B's lease alone.
func TestTakeoverAcrossInstances(t *testing.T) {
	st := instances(t, 2)
	a, b := st[0], st[1]
	ra := request("ns", "order-1")
	ra.Owner, ra.Lease = "a", idempay.MinLease
	held := reserve(t, a, ra)

	rb := request("ns", "order-1")
	rb.Owner, rb.Key, rb.Lease = "b", "key-b", time.Minute
	var took idempay.Reservation
	for deadline := time.Now().Add(5 * time.Second); ; {
		took = reserve(t, b, rb)
		if took.Claimed {
			break
		}
		if took.Now.After(held.Record.LeaseUntil) || time.Now().After(deadline) {
			t.Fatalf("B refused at %s, after A's lease ran out at %s", took.Now, held.Record.LeaseUntil)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took.Now.Before(held.Record.LeaseUntil) || took.Record.Key != held.Record.Key || took.Created {
		t.Errorf("B took over at %s (A's lease until %s) with key %q, Created %v; want after the lease, A's key %q, not created",
			took.Now, held.Record.LeaseUntil, took.Record.Key, took.Created, held.Record.Key)
	}
	for _, st := range []idempay.State{idempay.StateOpen, idempay.StateFailed} {
		err := a.Resolve(t.Context(), idempay.Resolution{Namespace: "ns", ID: "order-1", Key: held.Record.Key,
			State: st, LeaseOwner: "a"})
		if !errors.Is(err, idempay.ErrLeaseLost) {
			t.Errorf("A's late Resolve(%s) naming itself = %v; want ErrLeaseLost", st, err)
		}
	}
	if rec, err := b.Load(t.Context(), "ns", "order-1"); err != nil || rec.LeaseOwner != "b" || rec.State != idempay.StateOpen {
		t.Errorf("after A's late writes: %+v, %v; want open and still leased to B", rec, err)
	}
}

// TestTenancyAcrossNamespaces charges one intent ID under two namespaces
// (two merchant accounts): two records, two keys, and settling one leaves
// the other open.
func TestTenancyAcrossNamespaces(t *testing.T) {
	st := instances(t, 2)
	one := request("stripe:acct_1", "order-1")
	two := request("stripe:acct_2", "order-1")
	two.Key = "key-other"
	r1, r2 := reserve(t, st[0], one), reserve(t, st[1], two)
	if !r1.Created || !r2.Created || r1.Record.Key == r2.Record.Key {
		t.Fatalf("two namespaces: Created %v and %v, keys %q and %q; want two new records with their own keys",
			r1.Created, r2.Created, r1.Record.Key, r2.Record.Key)
	}
	resolve(t, st[0], one.Namespace, "order-1", idempay.StateSucceeded)
	if rec, err := st[1].Load(t.Context(), two.Namespace, "order-1"); err != nil || rec.State != idempay.StateOpen {
		t.Errorf("the other namespace's record after settling the first: %+v, %v; want open", rec, err)
	}
	if open, err := st[1].ListOpen(t.Context(), one.Namespace, idempay.Cursor{}, 10); err != nil || len(open) != 0 {
		t.Errorf("ListOpen of the settled namespace = %d records, %v; want none", len(open), err)
	}
}

// TestFleetRace races instances × callers over the same intents, each
// caller in its own order with its own owner and key: every intent is
// created once, every caller is told the one stored key, and only the
// creator holds the lease.
func TestFleetRace(t *testing.T) {
	const (
		nInstances = 3
		callers    = 4
		intents    = 40
	)
	st := instances(t, nInstances)
	type answer struct{ created, claimed bool }
	var (
		mu      sync.Mutex
		keys    = map[string]map[string]bool{} // intent: keys told
		answers = map[string][]answer{}
	)
	var wg sync.WaitGroup
	for i := range nInstances * callers {
		wg.Go(func() {
			for _, n := range rand.Perm(intents) {
				r := request("ns", fmt.Sprint("order-", n))
				r.Owner, r.Key = fmt.Sprint("owner-", i), fmt.Sprint("key-", n, "-", i)
				res, err := st[i%nInstances].Reserve(context.Background(), r)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if keys[r.ID] == nil {
					keys[r.ID] = map[string]bool{}
				}
				keys[r.ID][res.Record.Key] = true
				answers[r.ID] = append(answers[r.ID], answer{res.Created, res.Claimed})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for id, as := range answers {
		created, claimed := 0, 0
		for _, a := range as {
			if a.created {
				created++
			}
			if a.claimed {
				claimed++
			}
		}
		if created != 1 || claimed != 1 || len(keys[id]) != 1 {
			t.Errorf("%s: %d created, %d claimed, keys told %v; want one creator holding the lease, one key", id, created, claimed, keys[id])
		}
	}
	if len(answers) != intents {
		t.Errorf("%d intents answered; want %d", len(answers), intents)
	}
}
