// Package fleet proves a shared idempay.KeyStore the way a service fleet uses
// it: several OS processes, each with its own Client, charging the same
// intents against the reference server (internal/refserver) through one
// store. A fleet is what a shared store exists for, and goroutines in one
// process cannot stand in for it: they share one Client, whose singleflight
// merges their calls before the store is ever asked.
//
// The processes are the test binary itself, re-executed with an environment
// variable naming its role (as the root package's crash test does), so there
// is no build step and every child runs exactly the code under test. A store
// package's test is a few lines:
//
//	func TestFleet(t *testing.T)    { fleet.Race(t, fleetStore()) }
//	func TestTakeover(t *testing.T) { fleet.Takeover(t, fleetStore()) }
//	func TestTenancy(t *testing.T)  { fleet.Tenancy(t, fleetStore()) }
//
// In the parent process these run the server, start the children and check
// the ledger; in a child, the same test function finds its role in the
// environment and runs the child's part instead.
//
// Three checks are made:
//
//   - Race: N processes race to charge the same intents, each in its own
//     shuffled order, with faults on, then settle what is left with faults
//     off. One key per intent over every request of every process, one charge
//     per intent, no outcome "failed", the key stored before any request
//     carrying it arrives.
//   - Takeover: a process holding leases on intents it has sent is killed
//     with SIGKILL; another process is refused (ErrInProgress, nothing sent)
//     while the leases last and takes the intents over with the same keys
//     after: no double charge.
//   - Tenancy: one intent ID under two merchant accounts is two records, two
//     keys and two charges, and neither account is ever answered with the
//     other's result.
//
// Sizes are flags of the test binary (-fleet.intents, -fleet.procs,
// -fleet.workers, -takeover.intents, -takeover.lease).
package fleet
