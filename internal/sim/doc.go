// Package sim is a seeded fault simulator for the whole idempay client.
//
// It runs the real idempay.Client, the real adapters (own API, Stripe,
// Omise, 2C2P) and the real KeyStores (memstore, filestore; PostgreSQL and
// Redis behind flags, on the real clock) against the in-process provider
// fakes, under a virtual clock, with several client instances sharing one store. Every fault is
// drawn from a PRNG keyed on (seed, intent, call, attempt, site), so a seed
// always gives the same fault schedule, and interleavings are forced by
// pausing a request at the transport (or a Reserve at the store) and running
// other calls while it waits, not left to the goroutine scheduler. A pause
// resumes when the calls it started have finished or are all blocked, as
// the runtime reports the seed's goroutines (goroutines.go): no verdict and
// no interleaving depends on how busy the machine is.
//
// Stores can lose what their servers may lose (crashstore.go, issue 16):
// crash models of PostgreSQL (commits made without a flush, inside the WAL
// writer's window), Redis (what WAITAOF did not wait for; or, without
// persistence, everything), with store clocks that step; the real Redis
// store can lose its data set; a killed file store is left unclosed, so
// that its next Open voids the dead process's leases. Every "failed" a
// caller was told is judged again at every later send and at the end
// (failedstory.go). The Redis models keep the real store's marker
// (crashmarker.go); a "filehost" world runs the file store on its own clock
// on a host whose wall clock is fast at one start (hostclock.go); in
// checkout worlds a guard's or a Deduper's Reserve may be answered after
// its lease ran out (latereserve.go, webhooks.go).
//
// After each seed an oracle checks, against the fakes' ledgers and the
// simulator's own records (never against what the SDK says of itself), the
// promises idempay makes: see oracle.go for the checks and FINDINGS.md for
// what they found on the code they were first run against.
//
// driver.go holds the simulator's contact with the Client's API and the
// KeyStore contract (the store hooks, the outcomes as a caller reads them);
// ops.go the refunds, captures and cancels; oracle.go the checks.
//
// Run it with
//
//	go test ./internal/sim -sim.seeds=2000 -sim.seed=1
//	go test ./internal/sim -run 'TestSim$' -sim.stores=pg-model,redis-model,redis-volatile
//
// and see sim_test.go for the other flags, and knownopen_test.go for the
// seeds that fail on today's code.
package sim
