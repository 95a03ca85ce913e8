// Package bench measures what idempay costs beside what a user would write
// without it, in a module of its own so that the SDK's module graph does not
// carry stripe-go, which only these comparisons need.
//
//   - BenchmarkCharge: one charge against the loopback reference server,
//     client=raw-net-http (a bare POST), client=go-retryablehttp (the same
//     POST through go-retryablehttp's default client), and idempay on each
//     store: client=idempay-memstore|idempay-filestore|idempay-postgres|
//     idempay-redis.
//   - BenchmarkCreatePaymentIntent: create+confirm against the fake Stripe,
//     client=stripe-go (stripe-go v82) and client=idempay-memstore|
//     idempay-filestore.
//   - BenchmarkStoreDirect: the write path of a charge (Reserve, Resolve)
//     through the PostgreSQL and Redis stores, db=postgres|redis/
//     client=idempay, beside the same round trips issued directly with pgx
//     and go-redis, client=direct.
//   - BenchmarkFsync: a small write and fsync, the floor of a durable
//     write on this disk, measured in the same run.
//
// Every benchmark runs at conc=1, 16 and 64 callers and reports ns/op,
// allocs/op, charges/s and the p50/p99 latency one caller sees. PostgreSQL
// and Redis are found as the tests find them (internal/testenv) and skipped
// when they do not answer. run.sh reproduces the tables of
// docs/performance.md with benchstat.
package bench
