package fleet

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/idempay/idempay"
)

var (
	intentsFlag = flag.Int("fleet.intents", 1000, "intents the fleet test races to charge")
	procsFlag   = flag.Int("fleet.procs", 4, "processes of the fleet test")
	workersFlag = flag.Int("fleet.workers", 8, "concurrent callers in each process of the fleet test")

	takeoverIntents = flag.Int("takeover.intents", 30, "intents the killed process of the takeover test holds")
	// The default is the client's, so that the stall after a SIGKILL the
	// takeover test reports is the one a service gets by default. The
	// test takes about 2.5 leases plus the start of two processes.
	takeoverLease = flag.Duration("takeover.lease", idempay.DefaultLease,
		"client lease of the takeover test, renewed every third of it (default idempay.DefaultLease)")
)

// Store describes the store under test to the harness.
type Store struct {
	// Name is used in messages.
	Name string
	// New makes a fresh, empty place for one test's records (a schema, a
	// key prefix, a file path), removed when t ends, and returns its name.
	// Only the parent process calls it.
	New func(t testing.TB) string
	// Open opens the store at loc in the calling process, closing it when
	// t ends. Every process of a test calls it with the same loc.
	Open func(t testing.TB, loc string) idempay.KeyStore
	// Exclusive says that one process at a time may have the store open
	// (bbolt locks its file): the parent then opens it only once every
	// child has exited, and cannot check the store while requests arrive.
	Exclusive bool
}

// Client settings shared by every process. The backoffs are milliseconds so
// that a run of thousands of charges with faults takes seconds; the ratios
// are what matter (several attempts fit in the server's 50 ms lease). The
// client lease is the default one: renewed every third of it while a flight
// runs, it need not outlast the retries.
const (
	account      = "fleet"
	serverLease  = 50 * time.Millisecond
	fleetLease   = idempay.DefaultLease
	retryElapsed = 2 * time.Second
)

func retryPolicy() idempay.RetryPolicy {
	return idempay.RetryPolicy{
		MaxAttempts: 6, InitialInterval: 2 * time.Millisecond, MaxInterval: 20 * time.Millisecond,
		MaxElapsed: retryElapsed,
		// The server's 503s say Retry-After: 0; a cap keeps a future
		// change of that from stretching the run.
		MaxRetryAfter: 20 * time.Millisecond,
	}
}

// newClient returns a Client of the fleet's account on store.
func newClient(t testing.TB, url string, store idempay.KeyStore, lease time.Duration, mod ...func(*idempay.Config)) *idempay.Client {
	t.Helper()
	cfg := idempay.Config{BaseURL: url, Store: store, Account: account, Lease: lease, Retry: retryPolicy()}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := idempay.New(cfg)
	if err != nil {
		t.Fatalf("idempay.New: %v", err)
	}
	return c
}

// namespace is the namespace of a client of the given account, computed by
// the client itself so that the harness never guesses its format.
func namespace(t testing.TB, acct string) string {
	t.Helper()
	c, err := idempay.New(idempay.Config{BaseURL: "http://127.0.0.1", Store: nopStore{}, Account: acct})
	if err != nil {
		t.Fatalf("idempay.New: %v", err)
	}
	return c.Namespace()
}

// intentID names intent i of a test; the prefix keeps the tests' intents
// apart in messages.
func intentID(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

// request is the charge of intent i: the same in every process, as a
// retried request of a real service would be.
func request(prefix string, i int) idempay.ChargeRequest {
	return idempay.ChargeRequest{IntentID: intentID(prefix, i), Amount: int64(100 + i), Currency: "JPY",
		Source: "tokn_fleet"}
}

// nopStore only lets namespace build a Client.
type nopStore struct{ idempay.KeyStore }

// loadTimeout bounds the harness's own store reads.
const loadTimeout = 10 * time.Second

func load(s idempay.KeyStore, ns, id string) (idempay.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	return s.Load(ctx, ns, id)
}
