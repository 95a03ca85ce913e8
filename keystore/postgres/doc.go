// Package postgres is an idempay.KeyStore kept in a PostgreSQL table, for a
// fleet of service instances that must all send the same idempotency key for
// a payment intent.
//
// # Schema
//
// New creates the table it needs (by default public.idempay_records) and
// records what it applied in a version table beside it
// (idempay_records_schema_version). Migrations run in one transaction under a
// PostgreSQL advisory lock keyed by the schema name, so any number of
// instances may start at once: the first applies them, the others wait and
// find nothing left to do. Deployments that run DDL separately can call
// Store.Migrate from a deploy step and pass WithoutMigration to New.
//
// Records are keyed by (namespace, intent_id): the same intent ID under two
// providers or two merchant accounts is two rows, so one tenant's key can
// never be replayed for another.
//
// # Round trips
//
// A charge on the happy path costs two statements, each one round trip once
// pgx has prepared it on the connection: the INSERT ... ON CONFLICT DO
// NOTHING of Reserve and the conditional UPDATE of Resolve. Reserve on an
// existing record adds one statement that claims the lease or reads the
// winner atomically. pgxpool may add a ping when it hands out a connection
// that sat idle (its ShouldPing hook); that is the pool's choice, not the
// store's.
//
// # Durability
//
// Reserve returns after its transaction commits. With PostgreSQL's default
// synchronous_commit=on that means the key is on disk (and on synchronous
// standbys, if configured) before the first byte of the charge is sent. Do
// not run this store under a role or database with synchronous_commit=off:
// a crash could then lose a key that was already sent.
//
// Resolve, by default, commits with synchronous_commit off for its own
// statement only: the contract lets a crash lose a resolution (the intent
// reopens and is resumed with the same key, which the provider answers with
// a replay), so a charge pays for one WAL flush, not two. The resolution
// still reaches disk within a fraction of a second (wal_writer_delay), or at
// the next durable commit. WithDurableResolve restores the flush.
//
// # Time
//
// Lease expiry is judged on the UpdatedAt the caller passes to Reserve (the
// client's clock), never on the database clock, so the store behaves like
// every other idempay.KeyStore. Times are stored as timestamptz, which keeps
// microseconds: values read back are truncated to the microsecond and
// returned in UTC. A zero LeaseUntil is stored as NULL.
package postgres
