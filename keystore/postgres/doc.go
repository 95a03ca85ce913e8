// Package postgres is an idempay.KeyStore kept in a PostgreSQL table, for a
// fleet of service instances that must all send the same idempotency key for
// a payment intent.
//
//	pool, err := pgxpool.New(ctx, dsn)
//	...
//	store, err := postgres.New(ctx, pool) // creates public.idempay_records
//
// New creates and migrates the table it needs (WithSchema, WithTable), in
// one transaction under an advisory lock, so any number of instances may
// start at once; deployments that run DDL separately call Store.Migrate
// from a deploy step and pass WithoutMigration. Records are keyed by
// namespace and intent ID: one tenant's key is never replayed for another.
//
// Reserve returns only after a synchronous commit, whatever the role's or
// the database's synchronous_commit says, so the key is on disk (and on
// synchronous standbys) before the first byte of the charge is sent. A
// charge's succeeded or pending close is the one write left asynchronous:
// lost, it reopens an intent whose key the provider answers by replay.
// WithDurableResolve makes every Resolve durable.
//
// Every instant of a record, leases and retention included, is the
// server's clock, so no instance's clock, however skewed, is compared with
// another's. A charge on the happy path costs two round trips.
//
// The schema's versions, the round trips, durability and time are
// described in README.md in this directory.
package postgres
