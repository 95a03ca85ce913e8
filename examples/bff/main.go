// Command bff runs a backend-for-frontend whose /checkout is guarded by
// package guard and charges through idempay, against a payment provider in
// the same process, and a simulated frontend that double-clicks, resends
// on timeouts and loses answers. Faults strike between the frontend and
// the BFF and between the BFF and the provider. Per checkout it prints the
// requests, the replays and the charges: exactly one each.
//
//	go run ./examples/bff
//	go run ./examples/bff -checkouts 30 -seed 7
//
// Everything is in this process, on loopback ports, with the in-memory
// KeyStore (one store for the guard's records and the charges', in their
// own namespaces). Nothing to install.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/guard"
	"github.com/idempay/idempay/keystore/memstore"
)

func main() {
	checkouts := flag.Int("checkouts", 12, "checkouts to run")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the faults")
	flag.Parse()
	if err := run(*checkouts, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "bff:", err)
		os.Exit(1)
	}
}

func run(checkouts int, seed uint64) error {
	w, err := newWorld(seed)
	if err != nil {
		return err
	}
	defer w.close()
	fmt.Printf("seed %d: a checkout across a provider outage, then %d checkouts under faults\n\n", seed, checkouts)
	story := outageCheckout(w.calm, w.road, w.prov, "order-outage", 1400)
	story.print()
	if err := story.check(); err != nil {
		return err
	}
	logs := []*checkoutLog{story.log}
	for i := range checkouts {
		logs = append(logs, w.fe.checkout(fmt.Sprintf("order-%03d", i+1), 1500+int64(i)*100))
	}
	return report(logs, w.prov, w.runs, w.faults)
}

// world is the demo: the provider, the BFF and two frontends, one behind
// a faulty network and one behind a calm one (for the outage story).
type world struct {
	faults   *dice
	prov     *provider
	road     *outage
	runs     *handlerRuns
	fe, calm *frontend
	close    func()
}

func newWorld(seed uint64) (*world, error) {
	w := &world{faults: newDice(seed, 0.12), runs: &handlerRuns{byKey: map[string][]string{}}}
	w.prov = newProvider(w.faults)
	provSrv := httptest.NewServer(w.prov)
	road, err := newOutage(http.DefaultTransport)
	if err != nil {
		provSrv.Close()
		return nil, err
	}
	w.road = road
	store := memstore.New()
	client, err := idempay.New(idempay.Config{
		BaseURL:    provSrv.URL,
		Provider:   idempay.OwnAPI{},
		Store:      store,
		Account:    "demo-merchant",
		HTTPClient: &http.Client{Transport: road, Timeout: 5 * time.Second},
		Retry:      idempay.RetryPolicy{MaxAttempts: 4, InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond},
	})
	if err != nil {
		provSrv.Close()
		return nil, err
	}
	g, err := guard.New(store, guard.WithScope("checkout"), guard.WithIdentity(merchantOf), guard.WithObserver(w.runs.note))
	if err != nil {
		provSrv.Close()
		return nil, err
	}
	bffSrv := httptest.NewServer((&bff{client: client, slow: w.faults}).routes(g))
	w.fe = &frontend{url: bffSrv.URL, client: &http.Client{Timeout: 200 * time.Millisecond,
		Transport: faultyTransport{next: http.DefaultTransport, faults: w.faults}}}
	w.calm = &frontend{url: bffSrv.URL, client: &http.Client{Timeout: 10 * time.Second}}
	w.close = func() {
		bffSrv.Close()
		client.Close(context.Background())
		provSrv.Close()
	}
	return w, nil
}

// merchantOf is the identity function: the tenant is the merchant the
// frontend authenticated as (a real BFF reads its session or token).
func merchantOf(r *http.Request) (string, error) {
	tenant, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tenant == "" {
		return "", fmt.Errorf("not authenticated")
	}
	return tenant, nil
}

// handlerRuns keeps, per key, what the guard did with each request.
type handlerRuns struct {
	mu    sync.Mutex
	byKey map[string][]string
}

func (h *handlerRuns) note(e guard.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byKey[e.Key] = append(h.byKey[e.Key], e.Outcome.String())
}

func (h *handlerRuns) of(key string) (ran int, seen string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	count := map[string]int{}
	for _, o := range h.byKey[key] {
		count[o]++
		if o == "stored" || o == "released" || o == "unsettled" || o == "not-stored" || o == "unrecorded" {
			ran++
		}
	}
	var parts []string
	for o, n := range count {
		parts = append(parts, fmt.Sprintf("%s×%d", o, n))
	}
	sort.Strings(parts)
	return ran, strings.Join(parts, " ")
}

// report prints one line per checkout and the totals, and fails unless
// every checkout was answered for good and charged exactly once.
func report(logs []*checkoutLog, prov *provider, runs *handlerRuns, faults *dice) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CHECKOUT\tSENT\tUNSENT\tTIMEOUT\tLOST\tANSWERS\tREPLAYS\tHANDLER RUNS (GUARD SAW)\tPROVIDER CALLS\tCHARGES\tRESULT")
	bad := 0
	for _, l := range logs {
		charges, calls := prov.ledger(l.order)
		ran, seen := runs.of(l.key)
		if len(charges) != 1 || l.final == "" {
			bad++
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%v\t%d\t%d (%s)\t%d\t%d\t%s\n", l.order, l.sent, l.unsent, l.timeouts, l.lost,
			l.statuses, l.replays, ran, seen, calls, len(charges), cmp.Or(l.final, "no final answer"))
	}
	w.Flush()
	fmt.Println("\nfaults struck:")
	counts := faults.counts()
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("  %-48s %d\n", n, counts[n])
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d checkouts were not charged exactly once", bad, len(logs))
	}
	fmt.Printf("\n%d checkouts, %d charges: exactly one each.\n", len(logs), len(logs))
	return nil
}
