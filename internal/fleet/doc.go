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
//     per intent, no outcome "failed" or "pending", one attempt per intent,
//     the key stored before any request carrying it arrives.
//   - Takeover: a process holding leases on intents it has sent is kept
//     alive for more than one lease term, while other flights (a second
//     client in its process; a second process on a shared store) are
//     refused with ErrInProgress and send nothing: only the heartbeat can
//     have kept the leases. It is then killed with SIGKILL, and another
//     process resumes every intent with the same keys: within two leases
//     for a shared store (the dead leases run out), at once for a store
//     that only one process opens (the file store voids them on open). The
//     stall from the kill to the last resumed intent is measured and
//     logged ("STALL"); no double charge.
//   - Tenancy: one intent ID under two merchant accounts is two records, two
//     keys and two charges, and neither account is ever answered with the
//     other's result.
//
// Sizes are flags of the test binary (-fleet.intents, -fleet.procs,
// -fleet.workers, -fleet.seed, -takeover.intents, -takeover.lease). The
// takeover test runs on the client's default lease (5 s) unless
// -takeover.lease says otherwise: about 10 s per shared store, most of it
// the lease terms it waits out (see Takeover).
package fleet
