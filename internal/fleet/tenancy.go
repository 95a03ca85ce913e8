package fleet

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/refserver"
)

// tenancyIntents is how many intent IDs both tenants charge.
const tenancyIntents = 50

// Tenancy charges the same intent IDs, with identical requests, for two
// merchant accounts (two Config.Account values, so two namespaces) through
// one store, both at once. The reference server maps each account's bearer
// secret to its own merchant, so its keys are tenant-scoped too, and it
// loses a fifth of its answers after charging, so that replays happen.
//
// It fails unless each intent ID gets two records with two keys and two
// charges, one per merchant; every answer names its own tenant's charge,
// never the other's (not from the store, not from the server); and a second
// instance of one tenant is answered from the store with that tenant's
// charge.
func Tenancy(t *testing.T, s Store) {
	if role := childRole(); role != "" {
		t.Fatalf("fleet: role %q has no part in Tenancy", role)
	}
	const prefix = "tenancy"
	tenants := []struct{ account, secret, merchant string }{
		{"acct-a", "sk_tenant_a", "merchant-a"},
		{"acct-b", "sk_tenant_b", "merchant-b"},
	}
	auth := map[string]string{}
	for _, tn := range tenants {
		auth[tn.secret] = tn.merchant
	}
	srv, url, stop := refserver.Start(refserver.Config{Auth: auth, Lease: serverLease, Seed: 3,
		Faults: refserver.FaultRates{Post: 0.2}})
	defer stop()
	store := s.Open(t, s.New(t))
	// The clients' own connections, closed before the server stops: a
	// connection the transport dialed but never used would hold the
	// server's graceful shutdown for its 5 s grace.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	tenant := func(k int) func(*idempay.Config) {
		return func(cfg *idempay.Config) {
			cfg.Account, cfg.Credentials = tenants[k].account, idempay.Secret(tenants[k].secret)
			cfg.HTTPClient = &http.Client{Transport: tr, Timeout: 30 * time.Second}
		}
	}
	clients := make([]*idempay.Client, len(tenants))
	for k := range tenants {
		clients[k] = newClient(t, url, store, fleetLease, tenant(k))
	}
	if clients[0].Namespace() == clients[1].Namespace() {
		t.Fatalf("two accounts share the namespace %q", clients[0].Namespace())
	}

	// Both tenants charge every intent at the same time.
	ctx := context.Background()
	got := make([][]*idempay.Charge, len(tenants))
	var wg sync.WaitGroup
	for k := range tenants {
		got[k] = make([]*idempay.Charge, tenancyIntents)
		for i := range tenancyIntents {
			wg.Go(func() { got[k][i] = chargeUntilKnown(t, clients[k], request(prefix, i)) })
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	tr.CloseIdleConnections()
	stop()

	f := failures{t: t}
	if err := srv.Ledger().Check(); err != nil {
		f.add("double charge", "%v", err)
	}
	st := srv.Stats()
	// Another instance of tenant A, on the same store: answered from it.
	other := newClient(t, url, store, fleetLease, tenant(0))
	fromServer := 0
	for i := range tenancyIntents {
		id := intentID(prefix, i)
		a, b := got[0][i], got[1][i]
		if a.ID == b.ID || a.Key == b.Key {
			f.add("shared", "%s: both tenants got charge %q / %q under key %q / %q", id, a.ID, b.ID, a.Key, b.Key)
		}
		for k, tn := range tenants {
			ch := got[k][i]
			if ch.ReplayedFrom == idempay.ReplayFromServer {
				fromServer++
			}
			led, ok := srv.Ledger().Find(tn.merchant, id)
			switch {
			case !ok:
				f.add("ledger", "%s: no charge for %s", id, tn.merchant)
			case led.ID != ch.ID || led.Key != ch.Key:
				f.add("replay", "%s answered charge %q under key %q for %s; its charge is %q under %q",
					id, ch.ID, ch.Key, tn.merchant, led.ID, led.Key)
			}
			// On its first charge a tenant can be answered from the
			// store only with a record that is not its own.
			if ch.ReplayedFrom == idempay.ReplayFromStore {
				f.add("replay", "%s: %s's first charge was answered from the store", id, tn.account)
			}
			rec, err := load(store, clients[k].Namespace(), id)
			if err != nil || rec.Key != ch.Key || rec.ProviderRef != ch.ID || rec.State != idempay.StateSucceeded {
				f.add("store", "%s of %s stored as key %q, charge %q, %s (%v); want %q, %q, succeeded",
					id, tn.account, rec.Key, rec.ProviderRef, rec.State, err, ch.Key, ch.ID)
			}
		}
		if n := srv.Ledger().Count(id); n != 2 {
			f.add("ledger", "%s charged %d times over both merchants, want 2", id, n)
		}
		keys := slices.Clone(st.KeysByOrder[id])
		slices.Sort(keys)
		want := []string{a.Key, b.Key}
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			f.add("keys", "%s: the server saw keys %v, want the two tenants' %v", id, keys, want)
		}
		again, err := other.Charge(ctx, request(prefix, i))
		if err != nil || again.ID != a.ID || again.ReplayedFrom != idempay.ReplayFromStore {
			f.add("replay", "%s: another instance of %s got %+v, %v; want %q from the store", id, tenants[0].account, again, err, a.ID)
		}
	}
	for k := range tenants {
		open := 0
		for _, err := range clients[k].Unresolved(ctx) {
			if err != nil {
				f.add("store", "%s: listing open intents: %v", tenants[k].account, err)
				break
			}
			open++
		}
		if open > 0 {
			f.add("store", "%s left %d intents open", tenants[k].account, open)
		}
	}
	f.report()
	t.Logf("tenancy %s: %d intent IDs x 2 accounts (%s, %s): %d charges, %d requests, %d answers replayed by the server; "+
		"every record, key and charge per tenant", s.Name, tenancyIntents, clients[0].Namespace(), clients[1].Namespace(),
		srv.Ledger().Len(), st.Requests, fromServer)
}

// chargeUntilKnown charges req until the outcome is known; the only faults
// are lost answers, which the next call settles by a replay.
func chargeUntilKnown(t testing.TB, c *idempay.Client, req idempay.ChargeRequest) *idempay.Charge {
	deadline := time.Now().Add(time.Minute)
	for {
		ch, err := c.Charge(context.Background(), req)
		if err == nil {
			return ch
		}
		if idempay.OutcomeOf(err) != idempay.OutcomeUnknown || time.Now().After(deadline) {
			t.Errorf("%s: %v", req.IntentID, err)
			return &idempay.Charge{ID: fmt.Sprintf("error: %v", err)}
		}
		time.Sleep(10 * time.Millisecond)
	}
}
