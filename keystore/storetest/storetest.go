// Package storetest checks that an idempay.KeyStore keeps the contract the
// Client relies on, in the manner of testing/fstest.TestFS and
// golang.org/x/net/nettest.TestConn: every store, bundled or third-party,
// calls Run from one of its own tests.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) idempay.KeyStore {
//			s, err := mystore.Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Each rule is a named subtest with a fresh store, so one broken rule does
// not hide the others and `go test -run 'TestConformance/Lease'` narrows the
// run. A failing subtest logs the rule it checks. The concurrency cases are
// meant to be run with -race.
//
// # Real time, the store's clock
//
// A store stamps every instant of a record from its own clock (PostgreSQL's
// now(), Redis's TIME, the process for an embedded store), which the suite
// cannot move. It works in real time instead: it reads time.Now before and
// after each call and requires every instant the store stamped during the
// call to lie between the two readings, give or take ClockSlack, which
// leaves room for a server on the same host and for microsecond truncation.
// Leases and retentions are a few tens to a few hundred milliseconds, and
// the cases that wait for them to run out sleep in parallel, so that the
// whole suite takes about a second against a fast store.
//
// BenchReserveResolve is the matching benchmark, so that stores can be
// compared with benchstat under the same load.
package storetest

import (
	"testing"
	"time"

	"github.com/idempay/idempay"
)

// ClockSlack is how far outside the caller's own readings, taken just
// before and just after a call, an instant stamped by the store during the
// call may lie. It covers a database server on the same host, whose clock
// is the host's, and the truncation of instants to the microsecond. A store
// whose server runs on another host must have its clock synchronised more
// closely than this for the suite to pass.
const ClockSlack = 5 * time.Millisecond

// Run runs the conformance suite against the stores built by open.
//
// open is called once per subtest and must return an empty store that no
// other subtest uses: Expire and ListOpen are checked by counting, and
// Expire acts on every namespace. Subtests that wait for a lease or a
// retention to run out run in parallel, so open may be called from several
// goroutines at once. It may register cleanups on the *testing.T it is
// given (closing the store, dropping a schema) and should call t.Fatal if
// the store cannot be built.
//
// Instants are compared with time.Time.Equal after truncating to the
// microsecond: a store may drop precision below the microsecond and may
// return times in any location, but nothing coarser.
func Run(t *testing.T, open func(t *testing.T) idempay.KeyStore) {
	t.Helper()
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			if c.parallel {
				t.Parallel()
			}
			// The rule is logged only when the case fails, so that a
			// failure report says which promise was broken without the
			// reader having to open this file.
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("rule: %s", c.rule)
				}
			})
			s := open(t)
			if s == nil {
				t.Fatal("open returned a nil KeyStore")
			}
			c.run(t, s)
		})
	}
}

// A testCase is one rule of the KeyStore contract and the check of it.
type testCase struct {
	name string // subtest name: area/short statement of the rule
	rule string // the rule in full, logged when the case fails
	// parallel marks a case that spends its time sleeping until a lease
	// or a retention runs out; such cases run alongside each other.
	parallel bool
	run      func(t *testing.T, s idempay.KeyStore)
}

// cases lists every rule in the order Run checks them. Grouping by area in
// the name lets a store author run one area with -run.
func cases() []testCase {
	var all []testCase
	all = append(all, reserveCases()...)
	all = append(all, leaseCases()...)
	all = append(all, releaseCases()...)
	all = append(all, attemptCases()...)
	all = append(all, resolveCases()...)
	all = append(all, loadCases()...)
	all = append(all, namespaceCases()...)
	all = append(all, listOpenCases()...)
	all = append(all, expireCases()...)
	all = append(all, concurrencyCases()...)
	all = append(all, contextCases()...)
	return all
}
