// Package redis is an idempay.KeyStore kept in Redis, for a fleet of service
// instances that must all send the same idempotency key for a payment
// intent. Build it on any go-redis client (a single server, Sentinel or
// Cluster) with New.
//
// # Durability
//
// A Redis store is only as durable as the Redis server's persistence
// settings. Every Reserve, and each Resolve with Resolution.Durable, must
// survive a crash of the server. On Redis 7.2 and later, with the AOF on,
// the Store sends WAITAOF 1 0 in the same round trip as the write and
// returns only once the AOF holds it on disk (ErrNotDurable if it does not
// within WithDurableWait). On older servers the write is on disk when it
// returns only with appendonly yes and appendfsync always; with appendfsync
// everysec a crash can lose the last second of keys, and a key lost after
// its charge was sent is a charge the fleet can send again under a new key.
// A server with persistence off (save "" and appendonly no, as the Redis on
// the project's development and CI machines runs) keeps nothing across a
// restart.
//
// The Store reads the server's settings (COMMAND INFO WAITAOF, CONFIG GET
// appendonly, appendfsync and maxmemory-policy) at its first write and
// reports them in Store.Durability. Where they fall short (persistence off,
// everysec without WAITAOF, an evicting policy, or CONFIG refused so that
// nothing can be told) every write that must be durable fails with a
// *DurabilityError before anything is written: the Store never answers a
// durable write it knows the server may lose. WithLossyServer accepts such
// a server (tests; a managed service checked by other means), and the
// problems are then logged once (WithLogger).
//
// Which writes must be durable is the Claim's rule (idempay.ClaimConfig.
// DurableFor): every Reserve, every failed close, and every close of a
// webhook handler, a guarded endpoint or the ledger. A charge's succeeded
// or pending close may be lost: the record reopens with a key the provider
// has seen, and resuming it is answered by a replay or lookup.
//
// Replication is asynchronous: a failover to a replica that had not
// received a write loses it, and WAITAOF 1 0 waits for the master's disk
// only.
//
// # A lost data set
//
// A restart without persistence, or a failover that drops writes, loses
// records whose keys may have been sent. Each namespace keeps a marker
// whose write sequence every Reserve advances; a Store that finds it below
// what it has seen knows the server lost writes, notes when in the marker,
// and for WithLossWindow (default 24 hours) reports every reservation of
// the namespace as idempay.Reservation.Unproven, to every Store of the
// fleet. The Client then asks the provider about the intent, under any key,
// before it sends anything, and sends nothing if the provider cannot
// answer. A loss while no process of the fleet runs is not noticed: keep
// persistence on.
//
// Run the server with maxmemory-policy noeviction. Under an allkeys-*
// policy Redis may evict an open record, whose key may already have been
// sent; under a volatile-* policy it may evict a settled record before its
// TTL. Either way the intent's next charge gets a new key and can charge
// again. With noeviction a full server refuses writes instead, and Reserve
// fails before anything is sent.
//
// # One clock
//
// Every instant of a record (CreatedAt, UpdatedAt, ClosedAt, LeaseUntil,
// and Reservation.Now) is the server's clock, read with redis.call('TIME')
// inside the script that writes it; Redis allows that before writes since
// 5.0 with effects replication, the only mode from 7.0 on, so replicas and
// the AOF get the instants, never a script to run again. Leases run out
// and Expire's retention is judged on the same clock, whatever the clients'
// clocks say. Instants are kept to the microsecond. In a Cluster each
// namespace lives on one master and uses its clock.
//
// # Layout
//
// Every key starts with the prefix (WithPrefix, default "idempay:") followed
// by a hash tag holding the namespace, so that all the keys of one namespace
// live in one Cluster slot and each operation is a single atomic Lua script
// over keys it is given:
//
//	<prefix>{<len>:<namespace>}:r:<intent ID>   hash: one record
//	<prefix>{<len>:<namespace>}:open            sorted set: open and pending intents, score CreatedAt (µs)
//	<prefix>{<len>:<namespace>}:settled         sorted set: succeeded and failed intents, score ClosedAt (µs)
//	<prefix>{<len>:<namespace>}:closed          the old layout's closed index, emptied by Expire
//	<prefix>{<len>:<namespace>}:marker          hash: the write sequence and when a loss was noticed
//	<prefix>namespaces                          set: namespaces that may have settled records, for Expire
//
// The namespace's length in the tag keeps namespaces and intent IDs that
// contain separators from ever producing the same key. A record's earlier,
// failed attempts are fields of its hash (h1.k, h1.fp, ...), which keep a
// result's bytes exactly. Records written before attempts existed read as
// attempt 1, closed at their last update (see legacy.go).
//
// # Costs
//
// A charge on the happy path is two round trips: the Reserve script (with
// WAITAOF when the server has it), and the closing Resolve script pipelined
// with an SADD of its namespace, so that Expire finds the namespace even
// after the namespaces set was lost. ListOpen is a page of the open index
// and one pipeline of HGETALL; Expire two scripts per batch.
//
// # Retention
//
// Open and pending records never carry a TTL: a record that expired while
// open would silently forget a key that may have been sent, and the next
// Reserve would charge again under a new key. A TTL (WithClosedTTL) is set
// only by the Resolve that settles a record, so Redis itself removes settled
// records that long after they were closed, and removed again when a new
// attempt reopens one. Expire deletes the settled records closed more than
// its retention ago by walking the settled index in batches, which is the
// retention mechanism when no TTL is set (the default).
package redis
