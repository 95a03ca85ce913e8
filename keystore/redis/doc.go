// Package redis is an idempay.KeyStore kept in Redis, for a fleet of service
// instances that must all send the same idempotency key for a payment
// intent. Build it on any go-redis client (a single server, Sentinel or
// Cluster) with New.
//
// # Durability
//
// A Redis store is only as durable as the Redis server's persistence
// settings. Reserve returns once the server has applied the write in memory;
// whether the key survives a crash of the server is decided by its
// configuration, not by this package. For payment keys run the server with
// AOF and fsync on every write (appendonly yes, appendfsync always); with the
// default appendfsync everysec a crash can lose the last second of keys, and
// a key lost after its charge was sent is a charge the fleet can send again
// under a new key. A server with persistence off (save "" and appendonly no,
// as the Redis on the project's development and CI machines runs) keeps
// nothing across a restart: use it for tests only. With replicas, a failover
// to a replica that had not received a write loses it too: replication is
// asynchronous, and this package does not wait for replicas (WAIT, or
// WAITAOF from Redis 7.2 on) before Reserve returns.
//
// Run the server with maxmemory-policy noeviction. Under an allkeys-*
// policy Redis may evict an open record, whose key may already have been
// sent; under a volatile-* policy it may evict a settled record before its
// TTL. Either way the intent's next charge gets a new key and can charge
// again. With noeviction a full server refuses writes instead, and Reserve
// fails before anything is sent.
//
// # Layout
//
// Every key starts with the prefix (WithPrefix, default "idempay:") followed
// by a hash tag holding the namespace, so that all the keys of one namespace
// live in one Cluster slot and each operation is a single atomic Lua script:
//
//	<prefix>{<len>:<namespace>}:r:<intent ID>   hash: one record
//	<prefix>{<len>:<namespace>}:open            sorted set: open and pending intents by CreatedAt
//	<prefix>{<len>:<namespace>}:closed          sorted set: succeeded and failed intents by CreatedAt
//	<prefix>namespaces                          set: namespaces with records, for Expire
//
// The namespace's length in the tag keeps namespaces and intent IDs that
// contain separators from ever producing the same key.
//
// # Reserve
//
// Reserve runs one script: if the record is absent it is written (the
// equivalent of SET NX) together with its entry in the open index; if it
// exists, the lease is claimed or the record read, in the same atomic step.
// A plain SET NX followed by a separate index update would leave a window in
// which a crash keeps the key but drops the intent from ListOpen, and an
// unlisted open intent is money nobody will reconcile. The first Reserve of
// a namespace by a Store also adds the namespace to the namespaces set,
// before the record is written.
//
// # Retention
//
// Open and pending records never carry a TTL: a record that expired while
// open would silently forget a key that may have been sent, and the next
// Reserve would charge again under a new key. A TTL (WithClosedTTL) is set
// only by the Resolve that settles a record, so Redis itself removes settled
// records that long after they were closed. Expire deletes settled records
// created before its cutoff by walking the closed index in batches, which is
// the retention mechanism when no TTL is set (the default). With a TTL the
// closed index is trimmed as records age out (see WithClosedTTL), so Expire
// only finds settled records whose index entry is still there; the others
// are left to Redis's expiry.
//
// # Time
//
// Times are stored with nanosecond precision as fixed-width decimal Unix
// nanoseconds, so the scripts can compare them exactly as strings; they are
// returned in UTC. Times must lie between 1970 and 2262 (the zero time, "no
// lease", is stored as empty). Lease expiry is judged on the UpdatedAt the
// caller passes to Reserve, never on the server's clock. The sorted sets use
// CreatedAt in microseconds as their score, so ListOpen orders records
// created within the same microsecond by intent ID.
package redis
