// Package storebench holds one benchmark that measures every KeyStore of the
// module side by side: the write path of a charge (Reserve of a new intent,
// then Resolve to succeeded) at 1, 16 and 64 concurrent callers, for the
// memory, file, PostgreSQL and Redis stores, in one run.
//
// It has no code of its own: the benchmark is in its test file, and the
// measurement is keystore/storetest's BenchReserveResolve, the one each
// store's own package runs too. Putting the four stores in one benchmark
// gives sub-benchmarks named store=NAME/conc=N, which benchstat lays out as a
// table with one column per store:
//
//	go test -run '^$' -bench ReserveResolve -count 6 ./internal/storebench | tee stores.txt
//	benchstat -col /store stores.txt
//
// PostgreSQL and Redis are found as the tests find them (IDEMPAY_POSTGRES_DSN,
// IDEMPAY_REDIS_ADDR, see internal/testenv); a store whose server does not
// answer is skipped with a message.
package storebench
