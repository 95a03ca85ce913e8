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
// BenchReserveResolve is the matching benchmark, so that stores can be
// compared with benchstat under the same load.
package storetest

import (
	"testing"

	"github.com/idempay/idempay"
)

// Run runs the conformance suite against the stores built by open.
//
// open is called once per subtest and must return an empty store that no
// other subtest uses: Expire and ListOpen are checked by counting. It may
// register cleanups on the *testing.T it is given (closing the store,
// dropping a schema) and should call t.Fatal if the store cannot be built.
//
// The suite writes times truncated to the microsecond, in UTC and in other
// zones, and compares what it reads back with time.Time.Equal after
// truncating to the microsecond: a store may drop precision below the
// microsecond and may return times in any location, but nothing coarser.
func Run(t *testing.T, open func(t *testing.T) idempay.KeyStore) {
	t.Helper()
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
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
	run  func(t *testing.T, s idempay.KeyStore)
}

// cases lists every rule in the order Run checks them. Grouping by area in
// the name lets a store author run one area with -run.
func cases() []testCase {
	var all []testCase
	all = append(all, reserveCases()...)
	all = append(all, concurrencyCases()...)
	all = append(all, namespaceCases()...)
	all = append(all, leaseCases()...)
	all = append(all, resolveCases()...)
	all = append(all, loadCases()...)
	all = append(all, listOpenCases()...)
	all = append(all, expireCases()...)
	all = append(all, contextCases()...)
	return all
}
