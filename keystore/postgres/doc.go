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
// Store.Migrate from a deploy step and pass WithoutMigration to New. A
// database at a newer version than the binary's is left alone.
//
// Version 2 (contract v2: attempts, history, the server's clock, retention
// from closing) upgrades a version-1 table in place: its records stay
// readable and claimable, settled ones expire by the time they were last
// updated, which is when they closed, and a version-1 binary still running
// during the deploy keeps working; a trigger stamps closed_at on the records
// it closes.
//
// Records are keyed by (namespace, intent_id): the same intent ID under two
// providers or two merchant accounts is two rows, so one tenant's key can
// never be replayed for another. An intent's earlier, failed attempts are
// kept in its row's history column (jsonb).
//
// # Round trips
//
// Each statement is one round trip once pgx has prepared it on the
// connection. Reserve costs one when it creates the record (INSERT ... ON
// CONFLICT DO NOTHING) and two when the record exists: the insert, then one
// statement that begins a new attempt, claims the lease or reads the
// record, atomically. Resolve, Load and a page of ListOpen cost one each,
// and so does a refused Resolve: the statement that tries the write also
// returns what it checked. Expire costs one per batch. A charge on the happy
// path thus costs two, the insert and the Resolve. pgxpool may add a ping
// when it hands out a connection that sat idle (its ShouldPing hook); that
// is the pool's choice, not the store's.
//
// # Durability
//
// Reserve returns after its transaction commits with a synchronous commit:
// each statement sets synchronous_commit for its own transaction to on (or
// keeps the session's remote_apply), so the key is on disk, and on the
// synchronous standbys if any are configured, before the first byte of the
// charge is sent, whatever the role's or the database's defaults (off,
// local and remote_write are raised to on).
//
// Resolve commits the same way when the Resolution says Durable, and with
// synchronous_commit off otherwise. The idempay.Claim sets Durable from the
// state it writes (idempay.ClaimConfig.DurableFor), so no caller has to
// remember: every failed close (lost, it would reopen a key that may never
// have been sent, and a resume would send it for the first time), and
// every close of a webhook handler, a guarded endpoint or the ledger,
// whose results nothing could replay. A charge's or an operation's
// succeeded or pending close is the one write left asynchronous: a crash
// within the WAL writer's window (up to three times wal_writer_delay)
// reopens the record with a key the provider has seen, and resuming it is
// answered by the provider's replay or lookup. So a successful charge pays
// for one WAL flush, not two. WithDurableResolve makes every Resolve
// durable.
//
// # Time
//
// Every instant of a record is the server's: created_at, updated_at,
// closed_at and lease_until are stamped in the statements from now() (an
// insert's transaction start) or clock_timestamp() (read once per statement,
// after the row lock, so that the instants of one record never go back), and
// Reservation.Now is the instant the statement used. Leases run out on the
// server's clock and Expire's retention is measured on it, so no instance's
// clock, however skewed, is ever compared with another's. Times keep
// microseconds (timestamptz) and are returned in UTC; a lease or a retention
// is rounded up to the microsecond. A free lease is stored as an empty owner
// and a NULL lease_until.
package postgres
