// Package redis is an idempay.KeyStore kept in Redis, for a fleet of service
// instances that must all send the same idempotency key for a payment
// intent. Build it on any go-redis client (a single server, Sentinel or
// Cluster) with New.
//
//	store, err := redis.New(goredis.NewClient(&goredis.Options{Addr: addr}))
//
// A Redis store is only as durable as the server's persistence. Run it
// with the AOF on (Redis 7.2 or later, where the Store waits for the AOF
// with WAITAOF; on older servers appendfsync always) and with
// maxmemory-policy noeviction: an evicted or lost record is a key the
// fleet may send again under a new one. The Store reads the server's
// settings at its first write (Store.Durability) and, where they fall
// short, fails every write that must be durable with a *DurabilityError
// before writing anything; WithLossyServer accepts such a server, for
// tests or a service checked by other means.
//
// A data set lost by a restart or a failover is noticed by a marker per
// namespace: for WithLossWindow afterwards every reservation of the
// namespace is idempay.Reservation.Unproven, and the Client asks the
// provider before it sends anything. Replication is asynchronous: a
// failover to a replica that missed a write loses it.
//
// Every instant of a record is the server's clock, read inside the script
// that writes it. Each namespace's keys share one Cluster slot (a hash tag
// after WithPrefix), and every operation is one atomic Lua script. Open
// and pending records never carry a TTL; WithClosedTTL sets one on settled
// records, and Expire walks the settled index otherwise.
//
// Durability, loss detection, the clock, the key layout and the costs are
// described in README.md in this directory.
package redis
